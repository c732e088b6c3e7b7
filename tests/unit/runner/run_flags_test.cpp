// `zoobench run`'s flags and what reaches a child: every flag is either forwarded to the
// per-model child as the user gave it or decided by the parent for each child, so a new flag
// cannot be forgotten on its way to the child (this test fails until it is one or the other).
#include "zoobench/runner/run_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "zoobench/runner/worker_pool.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

using ::testing::HasSubstr;

// A valid value for each flag that takes one. A new flag needs its entry here.
const std::map<std::string, std::string>& sample_values() {
  static const std::map<std::string, std::string> kValues = {
      {"--zoo", "some-zoo"},
      {"--suites-dir", "."},  // checked: it must exist
      {"--suite", "demo"},
      {"--only", "resnet18"},
      {"--filter", "res"},
      {"--exclude", "vgg"},
      {"--backend", "jit,inductor"},  // inductor takes --freezing and --dynamic-shapes
      {"--exclude-exact", "vgg16"},
      {"--compile-options", "{\"triton.cudagraphs\": false}"},
      {"--devices", "cpu"},
      {"--cpu-affinity", "0"},
      {"--accuracy-workers", "2"},
      {"--iterations", "3"},
      {"--iterations-per-run", "7"},
      {"--repeat", "11"},
      {"--max-repeat", "40"},
      {"--target-interval", "0.05"},
      {"--warmup", "4"},
      {"--settle-iterations", "2"},
      {"--unstable-cov", "0.05"},
      {"--timeout", "99"},
      {"--time-budget", "600"},
      {"--tol", "0.01"},
      {"--save-outputs", "outputs"},
      {"--output", "out.csv"},
      {"--output-directory", "out"},
      {"--expected", "expected.csv"},
      {"--output-format", "zoobench"},
      {"--total-partitions", "3"},
      {"--partition-id", "1"},
      {"--input-layouts", "contiguous,transposed"},
      {"--disable-switches", "freeze,patch:packed_dropout"},
      {"--optimizer", "adam"},
      {"--lr", "0.5"},
      {"--row-out", "rows.json"},
      {"--log-file", "model.log"},
      {"--device-gate", "out/.device-gate-cpu.lock"},
      {"--export-here", "list"},
      {"--accuracy-batch-here", "4"},
      {"--jobs", "2"},
      {"--eager-reference", "torchscript"},
      {"--batch-size", "16"},
      {"--zoo-max-gb", "40"},
      {"--torchbench-dir", "."}};
  return kValues;
}

bool is_refused_upstream_flag(const std::string& name) {
  for (const auto& flag : refused_upstream_flags()) {
    for (const auto& refused : split(flag.names, ','))
      if (refused == name) return true;
  }
  return false;
}

// Flags that exclude each other: only the first of each group is given. Upstream's flags that
// zoobench refuses are tested on their own.
bool left_out(const std::string& name) {
  return is_refused_upstream_flag(name) || name == "--inference" || name == "--float16" ||
         name == "--bfloat16" || name == "--amp" ||
         name == "--no-export" ||           // --zoo-max-gb manages what the run exports
         name == "--inductor" ||            // is --backend inductor
         name == "--keep-compile-cache" ||  // --ci and --cold-start-latency compile cold
         name == "--verbose" ||             // -q
         name == "--freezing" ||            // inference only; this test gives --training
         name == "--tolerance";  // the mode, tested on its own: its value is the old form
}

TEST(RunFlags, EveryFlagIsForwardedToTheChildOrDecidedByTheParent) {
  CLI::App command("run");
  RunFlags flags;
  add_run_flags(command, flags);
  std::vector<std::string> argv = {"run"};
  std::vector<std::string> given;
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_lnames().empty()) continue;
    const std::string name = "--" + option->get_lnames().front();
    if (name == "--help" || left_out(name)) continue;
    given.push_back(name);
    argv.push_back(name);
    if (option->get_expected_max() != 0) {
      auto value = sample_values().find(name);
      ASSERT_NE(value, sample_values().end()) << name << " is new: give it a sample value here";
      argv.push_back(value->second);
    }
  }
  std::reverse(argv.begin(), argv.end());
  argv.pop_back();  // CLI11 parses a reversed vector without the program name
  command.parse(argv);
  finish_run_flags(command, flags);

  const auto& decided = parent_decided_flags();
  const auto& forwarded = flags.options.child_flags;
  for (const auto& name : given) {
    const bool by_parent = std::find(decided.begin(), decided.end(), name) != decided.end();
    const bool in_child = std::find(forwarded.begin(), forwarded.end(), name) != forwarded.end();
    EXPECT_NE(by_parent, in_child) << name
                                   << (by_parent ? " is decided by the parent and also forwarded"
                                                 : " reaches the child neither way");
  }
  // The parent's list names real flags only.
  for (const auto& name : decided) {
    if (left_out(name)) continue;  // real, but not given with the others
    EXPECT_NE(std::find(given.begin(), given.end(), name), given.end())
        << name << " is no flag of run";
  }
  // A child's command line: the parent's decisions for it, then the user's other flags, values
  // kept.
  const JobPlan job = plan_job(flags.options, ZooEntry{"demo", "resnet18", "m.json"}, SuiteConfig(),
                               "python_eager", true, true);
  auto child = child_arguments(job, "cpu", "rows.json", "model.log", "");
  auto at = [&](const std::string& flag) {
    auto it = std::find(child.begin(), child.end(), flag);
    return it == child.end() || it + 1 == child.end() ? std::string("<absent>") : *(it + 1);
  };
  EXPECT_EQ(at("--backend"), "python_eager");
  EXPECT_EQ(at("--timeout"), "0");
  EXPECT_EQ(at("--repeat"), "11");
  EXPECT_EQ(at("--compile-options"), "{\"triton.cudagraphs\": false}");
  EXPECT_EQ(at("--lr"), "0.5");
  EXPECT_EQ(std::count(child.begin(), child.end(), "--only"), 1);
  EXPECT_EQ(std::count(child.begin(), child.end(), "--cpu-affinity"), 0);
  EXPECT_EQ(std::count(child.begin(), child.end(), "--accuracy-workers"), 0);  // the parent's
  EXPECT_EQ(std::count(child.begin(), child.end(), "--time-budget"), 0);  // the parent's
  // The parent exports: the child reads the batch size's zoo entries and exports nothing.
  EXPECT_EQ(at("--zoo"), "some-zoo/batch-16");
  EXPECT_EQ(std::count(child.begin(), child.end(), "--no-export"), 1);
  EXPECT_EQ(std::count(child.begin(), child.end(), "--batch-size"), 0);
  EXPECT_EQ(std::count(child.begin(), child.end(), "--zoo-max-gb"), 0);
}

TEST(RunFlags, AnUnstableTimingIsTimedAgainUnlessTold) {
  auto parsed = [](std::vector<std::string> argv) {
    CLI::App command("run");
    RunFlags flags;
    add_run_flags(command, flags);
    std::reverse(argv.begin(), argv.end());
    command.parse(argv);
    return flags.options;
  };
  EXPECT_TRUE(parsed({}).retime_unstable);
  EXPECT_FALSE(parsed({"--no-retime-unstable"}).retime_unstable);
  EXPECT_DOUBLE_EQ(parsed({}).measurement.unstable_cov, 0.025);
  EXPECT_DOUBLE_EQ(parsed({"--unstable-cov", "0.1"}).measurement.unstable_cov, 0.1);
}

TEST(RunFlags, SeveralBackendsAreParsedInOrderAndChecked) {
  CLI::App command("run");
  RunFlags flags;
  add_run_flags(command, flags);
  command.parse(std::vector<std::string>{"jit, inductor:reduce-overhead,python_eager", "--backend",
                                         "--accuracy"});
  finish_run_flags(command, flags);
  EXPECT_EQ(flags.options.backends,
            (std::vector<std::string>{"jit", "inductor:reduce-overhead", "python_eager"}));
  EXPECT_EQ(flags.options.backend, "jit");

  for (const std::string bad : {"jit,jit", "jit,nope!", ","}) {
    CLI::App again("run");
    RunFlags other;
    add_run_flags(again, other);
    again.parse(std::vector<std::string>{bad, "--backend", "--accuracy"});
    EXPECT_THROW(finish_run_flags(again, other), UsageError) << bad;
  }
}

// Out-of-range numbers are errors that name the value, never accepted in silence: NaN and
// infinity pass CLI11's own range checks, so these are zoobench's.
TEST(RunFlags, NumbersOutOfRangeAndMissingFoldersAreRefusedWithTheValue) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--timeout", "-1"},       {"--timeout", "nan"},
      {"--timeout", "inf"},      {"--tol", "-5"},
      {"--tol", "nan"},          {"--tol", "1e-3x"},
      {"--warmup", "-3"},        {"--lr", "0"},
      {"--lr", "nan"},           {"--iterations-per-run", "-2"},
      {"--unstable-cov", "nan"}, {"--suites-dir", "/no/such/suites"}};
  for (const auto& [flag, value] : refused) {
    CLI::App command("run");
    RunFlags flags;
    add_run_flags(command, flags);
    try {
      command.parse(std::vector<std::string>{value, flag, "--accuracy"});
      ADD_FAILURE() << flag << " " << value << " was accepted";
    } catch (const CLI::ParseError& error) {
      EXPECT_NE(std::string(error.what()).find(value), std::string::npos)
          << flag << " " << value << ": the message does not name the value: " << error.what();
    }
  }
  // The edges of the ranges are accepted.
  CLI::App command("run");
  RunFlags flags;
  add_run_flags(command, flags);
  command.parse(std::vector<std::string>{"0", "--timeout", "0", "--tol", "0", "--warmup",
                                         "1e-3", "--lr", "--accuracy"});
  finish_run_flags(command, flags);
  EXPECT_EQ(flags.options.timeout_s, 0.0);
  EXPECT_EQ(flags.options.tolerance, 0.0);
  EXPECT_EQ(flags.options.optimizer.learning_rate, 1e-3);
}


// Parses `argv` (without the program name) as `zoobench run` does.
RunFlags parsed(std::vector<std::string> argv) {
  CLI::App command("run");
  RunFlags flags;
  add_run_flags(command, flags);
  std::reverse(argv.begin(), argv.end());
  command.parse(argv);
  finish_run_flags(command, flags);
  return flags;
}

std::string usage_error_of(const std::vector<std::string>& argv) {
  try {
    parsed(argv);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const CLI::ParseError& e) {
    return std::string("parse error: ") + e.what();
  }
  return "<accepted>";
}

// Upstream's spellings (benchmarks/dynamo/common.py) mean what they mean there.
TEST(RunFlags, UpstreamSpellingsMeanWhatTheyMeanUpstream) {
  EXPECT_EQ(parsed({"--accuracy", "-d", "cpu", "--device", "cuda:1"}).options.devices,
            (std::vector<std::string>{"cpu", "cuda:1"}));
  EXPECT_EQ(parsed({"--accuracy", "--devices", "cpu,cuda"}).options.devices,
            (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(parsed({"--accuracy", "--inductor"}).options.backends,
            (std::vector<std::string>{"inductor"}));
  EXPECT_THAT(usage_error_of({"--accuracy", "--inductor", "--backend", "jit"}),
              HasSubstr("give one of the two"));

  const RunFlags tolerance = parsed({"--tolerance"});
  EXPECT_TRUE(tolerance.options.tolerance_mode);
  EXPECT_TRUE(tolerance.options.accuracy);
  EXPECT_FALSE(tolerance.options.tolerance.has_value());
  EXPECT_THAT(usage_error_of({"--accuracy", "--tolerance", "0.01"}), HasSubstr("--tol 0.01"));

  const RunFlags freezing = parsed({"--accuracy", "--backend", "jit,inductor", "--freezing"});
  EXPECT_TRUE(freezing.options.freezing);
  EXPECT_THAT(usage_error_of({"--accuracy", "--backend", "jit", "--freezing"}),
              HasSubstr("--freezing means nothing to jit"));
  EXPECT_THAT(usage_error_of({"--accuracy", "--backend", "inductor", "--freezing", "--training"}),
              HasSubstr("in inference"));
  EXPECT_THAT(usage_error_of({"--accuracy", "--backend", "jit", "--dynamic-shapes"}),
              HasSubstr("torch.compile backends"));
  EXPECT_TRUE(parsed({"--accuracy", "--backend", "aot_eager", "--dynamic-shapes"}).options.dynamic_shapes);

  EXPECT_THAT(usage_error_of({"--accuracy", "--ci", "--keep-compile-cache"}), HasSubstr("cold"));
  EXPECT_THAT(usage_error_of({"--accuracy", "--cold-start-latency", "--keep-compile-cache"}),
              HasSubstr("cold"));
  EXPECT_THAT(usage_error_of({"--accuracy", "-q", "-v"}), HasSubstr("parse error"));
  EXPECT_THAT(usage_error_of({"--accuracy", "--optimizer", "rmsprop"}), HasSubstr("rmsprop"));

  const RunFlags selection =
      parsed({"--accuracy", "--exclude-exact", "vgg16", "--exclude-exact", "alexnet", "--no-skip",
              "--skip-accuracy-check"});
  EXPECT_EQ(selection.options.exclude_exact, (std::vector<std::string>{"vgg16", "alexnet"}));
  EXPECT_TRUE(selection.options.no_skip);
  EXPECT_TRUE(selection.options.skip_accuracy_check);
}

// -n is upstream's short spelling of --repeat (common.py: "--repeat", "-n").
TEST(RunFlags, DashNIsRepeat) {
  EXPECT_EQ(parsed({"--performance", "-n", "7"}).options.measurement.repeat, 7);
  EXPECT_EQ(parsed({"--performance", "--repeat", "9"}).options.measurement.repeat, 9);
  EXPECT_THAT(usage_error_of({"--performance", "-n", "0"}),
              HasSubstr("--repeat must be at least 1"));
}

// Upstream's flags that zoobench has no flag for are refused (a UsageError: exit 2) with what
// zoobench offers, with or without a value, every one given named at once.
TEST(RunFlags, UpstreamFlagsZoobenchLacksAreRefusedNamingItsWay) {
  EXPECT_THAT(usage_error_of({"--accuracy", "--batch_size", "8"}), HasSubstr("--batch-size"));
  EXPECT_THAT(usage_error_of({"--accuracy", "--batch_size=8"}),
              HasSubstr("--batch_size (upstream's): zoobench spells it --batch-size N"));
  EXPECT_THAT(usage_error_of({"--accuracy", "--threads", "4"}), HasSubstr("OMP_NUM_THREADS"));
  EXPECT_THAT(usage_error_of({"--accuracy", "-t", "4"}), HasSubstr("--cpu-affinity"));
  EXPECT_THAT(usage_error_of({"--accuracy", "--print-graph-breaks"}),
              HasSubstr("TORCH_LOGS=graph_breaks"));
  EXPECT_THAT(usage_error_of({"--performance", "--export-profiler-trace"}),
              HasSubstr("not supported"));
  const std::string both =
      usage_error_of({"--accuracy", "--explain", "--timing", "--inductor", "--device-index", "1"});
  EXPECT_THAT(both, HasSubstr("--explain (upstream's)"));
  EXPECT_THAT(both, HasSubstr("--timing (upstream's)"));
  EXPECT_THAT(both, HasSubstr("-d cuda:N"));
  // Every entry says something, and none shadows a flag of zoobench's own.
  for (const auto& flag : refused_upstream_flags()) {
    EXPECT_FALSE(flag.instead.empty()) << flag.names;
    for (const auto& name : split(flag.names, ','))
      EXPECT_THAT(usage_error_of({"--accuracy", name}), HasSubstr(name + " (upstream's)"));
  }
}

// --ci says once, in the parent, which of upstream's --ci effects it applies and which not.
TEST(RunFlags, CiSaysWhichOfUpstreamsEffectsItApplies) {
  const std::string text = upstream_ci_effects(parsed({"--accuracy", "--ci"}).options);
  EXPECT_THAT(text, HasSubstr("applied as upstream's: a fresh Inductor cache"));
  EXPECT_THAT(text, HasSubstr("not applied: translation validation"));
  EXPECT_THAT(text, HasSubstr("TORCHDYNAMO_TRANSLATION_VALIDATION=1"));
  EXPECT_THAT(text, HasSubstr("; SGD for CI_USE_SGD's models in CUDA training"));
  EXPECT_THAT(upstream_ci_effects(parsed({"--accuracy", "--ci", "--optimizer", "adam"}).options),
              HasSubstr("not CI_USE_SGD's SGD: every model trains with --optimizer adam"));

  const log::Level level = log::current_level();
  log::set_level(log::Level::kInfo);
  ::testing::internal::CaptureStderr();
  const RunFlags parent = parsed({"--accuracy", "--ci"});
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(parent.options.cold_compile_cache);
  EXPECT_THAT(printed, HasSubstr("--ci: not applied"));
  ::testing::internal::CaptureStderr();
  parsed({"--accuracy", "--ci", "--row-out", "rows.json"});  // a model's process: silent
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ::testing::internal::CaptureStderr();
  parsed({"--accuracy"});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  log::set_level(level);
}

}  // namespace
}  // namespace zoobench
