# The two commands a newcomer runs (see README.md):
#   make demo   set up, build, export the demo zoo, run accuracy + performance, write reports
#   make test   set up, build, run every test (ctest's summary is the last line printed)

BUILD ?= build
PYTHON ?= /usr/bin/python3
JOBS ?= $(shell nproc)
ZOO ?= zoo
RESULTS ?= results

PREFIX ?= /usr/local

.PHONY: setup setup-demo configure configure-cli build build-cli test demo install build-fuzzer fuzz fuzz-ci clean

# What the tests need (GoogleTest, Google Benchmark, Slurm, Chromium) comes with `make test` only.
setup:
	./scripts/setup-deps.sh test

setup-demo:
	./scripts/setup-deps.sh demo

# The full build, tests and benchmarks included (switched on if a demo build left them off).
configure: setup
	@grep -qs 'ZOOBENCH_BUILD_TESTS:BOOL=ON' $(BUILD)/CMakeCache.txt && test -f $(BUILD)/build.ninja || \
	  cmake -S . -B $(BUILD) -G Ninja -DZOOBENCH_PYTHON=$(PYTHON) -DZOOBENCH_BUILD_TESTS=ON -DZOOBENCH_BUILD_BENCH=ON

# The CLI alone; a new build folder leaves the tests and benchmarks out (their packages too).
configure-cli: setup-demo
	@test -f $(BUILD)/build.ninja || \
	  cmake -S . -B $(BUILD) -G Ninja -DZOOBENCH_PYTHON=$(PYTHON) -DZOOBENCH_BUILD_TESTS=OFF -DZOOBENCH_BUILD_BENCH=OFF

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The demo needs the CLI only: on two cores that is about a third of the full build.
build-cli: configure-cli
	cmake --build $(BUILD) -j $(JOBS) --target zoobench

test: build
	./scripts/run-tests.sh $(BUILD) -j $(JOBS) --label-exclude gpu

demo: build-cli
	./scripts/demo.sh

# zoobench, its Python plugin, exporter, suites and docs under PREFIX; the prefix can be moved.
install: build-cli
	cmake --install "$(BUILD)" --prefix "$(PREFIX)"

# The readers' fuzzer under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build
# folder (only what it links is built): FUZZ_MUTANTS per reader (docs/reliability.md).
# fuzz-ci is CI's bounded run of the same (.ci/run): FUZZ_CI_SECONDS per reader.
FUZZ_BUILD ?= build-fuzz
FUZZ_MUTANTS ?= 10000
FUZZ_SEED ?= 20261201
FUZZ_CI_SECONDS ?= 60
build-fuzzer: setup-demo
	@test -f $(FUZZ_BUILD)/build.ninja || cmake -S . -B $(FUZZ_BUILD) -G Ninja -DZOOBENCH_PYTHON=$(PYTHON) \
	  -DZOOBENCH_SANITIZE=ON -DZOOBENCH_BUILD_TESTS=OFF -DZOOBENCH_BUILD_BENCH=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target zoobench_fuzz

fuzz: build-fuzzer
	./scripts/fuzz.sh $(FUZZ_BUILD)/fuzz/zoobench_fuzz $(FUZZ_MUTANTS) $(FUZZ_SEED)

fuzz-ci: build-fuzzer
	./scripts/fuzz.sh $(FUZZ_BUILD)/fuzz/zoobench_fuzz $(FUZZ_MUTANTS) $(FUZZ_SEED) $(FUZZ_CI_SECONDS)

clean:
	rm -rf $(BUILD)
