# The two commands a newcomer runs (see README.md):
#   make demo   set up, build, export the demo zoo, run accuracy + performance, write reports
#   make test   set up, build, run every test (ctest's summary is the last line printed)

BUILD ?= build
PYTHON ?= /usr/bin/python3
JOBS ?= $(shell nproc)
ZOO ?= zoo
RESULTS ?= results

.PHONY: setup configure build build-cli test demo build-fuzzer fuzz fuzz-ci clean

setup:
	./scripts/setup-deps.sh

configure: setup
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) -G Ninja -DZOOBENCH_PYTHON=$(PYTHON)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The demo needs the CLI only: on two cores that is about a third of the full build.
build-cli: configure
	cmake --build $(BUILD) -j $(JOBS) --target zoobench

test: build
	./scripts/run-tests.sh $(BUILD) -j $(JOBS) --label-exclude gpu

demo: build-cli
	./scripts/demo.sh

# The readers' fuzzer under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build
# folder (only what it links is built): FUZZ_MUTANTS per reader (docs/reliability.md).
# fuzz-ci is CI's bounded run of the same (.ci/run): FUZZ_CI_SECONDS per reader.
FUZZ_BUILD ?= build-fuzz
FUZZ_MUTANTS ?= 10000
FUZZ_SEED ?= 20261201
FUZZ_CI_SECONDS ?= 60
build-fuzzer: setup
	@test -f $(FUZZ_BUILD)/build.ninja || cmake -S . -B $(FUZZ_BUILD) -G Ninja -DZOOBENCH_PYTHON=$(PYTHON) \
	  -DZOOBENCH_SANITIZE=ON -DZOOBENCH_BUILD_TESTS=OFF -DZOOBENCH_BUILD_BENCH=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target zoobench_fuzz

fuzz: build-fuzzer
	./scripts/fuzz.sh $(FUZZ_BUILD)/fuzz/zoobench_fuzz $(FUZZ_MUTANTS) $(FUZZ_SEED)

fuzz-ci: build-fuzzer
	./scripts/fuzz.sh $(FUZZ_BUILD)/fuzz/zoobench_fuzz $(FUZZ_MUTANTS) $(FUZZ_SEED) $(FUZZ_CI_SECONDS)

clean:
	rm -rf $(BUILD)
