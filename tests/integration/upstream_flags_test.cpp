// What a benchmarks/dynamo user relies on, through the real binary: exit statuses that gate CI
// (`run` with and without an expected file, `report --baseline`), runs that cannot run refused
// before any model starts, and upstream's flags with upstream's meaning (--skip-accuracy-check,
// --tolerance, --exclude-exact, --no-skip, -d).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "integration_helpers.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;
using ::testing::HasSubstr;
using ::testing::Not;

// A zoo of three quick models: one that passes, one whose eager run raises, one whose compiled
// side a test-only patch scales (patches/planted_faults.h): fail_accuracy at --tol 0.01.
struct GateZoo {
  zt::ScratchDir dir;
  std::string zoo = dir.file("zoo"), suites = dir.file("suites");
  static constexpr const char* kGoodAndRaiser = "--only good --only raiser";

  GateZoo() {
    write_text(suites + "/gate.yaml", "zoobench:\n  patches:\n    scaled: [test_scale_planted]\n");
    make_zoo(zoo, suites, "gate",
             {{"good", "mlp"}, {"raiser", "raiser"}, {"scaled", "planted"}, {"conv", "py_conv"}});
  }

  zt::CommandResult run(const std::string& out, const std::string& extra) const {
    return zt::run_command(zoobench_command("run --suite gate --timeout 120 --suites-dir " +
                                            quote(suites) + " --zoo " + quote(zoo) +
                                            " --output-directory " + quote(dir.file(out)) + " " +
                                            extra) +
                           " 2>&1");
  }
  std::string expected(const std::string& name, const std::string& text) const {
    write_text(dir.file(name), text);
    return dir.file(name);
  }
};

const GateZoo& gate_zoo() {
  static const GateZoo* zoo = new GateZoo();
  return *zoo;
}

TEST(RunExitStatus, AFailedRowExits1AndAnExpectedFileForgivesKnownFailuresOnly) {
  const GateZoo& z = gate_zoo();
  auto both = z.run("both", std::string("--accuracy ") + GateZoo::kGoodAndRaiser);
  EXPECT_EQ(both.exit_code, 1) << both.output;
  EXPECT_THAT(both.output, HasSubstr("exit 1: 1 of 2 rows failed: raiser accuracy (eager_1st_run_fail)"));

  auto good = z.run("good", "--accuracy --only good");
  EXPECT_EQ(good.exit_code, 0) << good.output;

  // The failure as expected (XFAIL): exit 0. The file names a model the run left out (--only):
  // not missing, as the run did not set out to run it.
  const std::string as_now =
      z.expected("as_now.csv", "name,accuracy\ngood,pass\nraiser,eager_1st_run_fail\nother,pass\n");
  auto known = z.run("known", std::string("--accuracy ") + GateZoo::kGoodAndRaiser +
                                  " --expected " + quote(as_now));
  EXPECT_EQ(known.exit_code, 0) << known.output;
  EXPECT_THAT(known.output, Not(HasSubstr("exit 1")));

  // Expected to pass: a new failure, exit 1, named with both statuses.
  const std::string all_pass = z.expected("all_pass.csv", "name,accuracy\ngood,pass\nraiser,pass\n");
  auto regressed = z.run("regressed", std::string("--accuracy ") + GateZoo::kGoodAndRaiser +
                                          " --expected " + quote(all_pass));
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  EXPECT_THAT(regressed.output, HasSubstr("raiser (expected pass, now eager_1st_run_fail)"));

  // Expected to fail and now passing: an improvement, exit 1 until the file records it, as
  // upstream's check_accuracy.py.
  const std::string good_fails = z.expected("good_fails.csv", "name,accuracy\ngood,fail_accuracy\n");
  auto improved = z.run("improved", "--accuracy --only good --expected " + quote(good_fails));
  EXPECT_EQ(improved.exit_code, 1) << improved.output;
  EXPECT_THAT(improved.output, HasSubstr("exit 1: 1 improved: good"));

  // A model of the run that the file does not name: MISSING_EXPECTED, exit 1, passing or not.
  const std::string raiser_only = z.expected("raiser_only.csv", "name,accuracy\nraiser,pass\n");
  auto unnamed = z.run("unnamed", "--accuracy --only good --expected " + quote(raiser_only));
  EXPECT_EQ(unnamed.exit_code, 1) << unnamed.output;
  EXPECT_THAT(unnamed.output, HasSubstr("good (MISSING_EXPECTED: not in"));

  auto no_file = z.run("no_file", "--accuracy --expected " + quote(z.dir.file("absent.csv")));
  EXPECT_EQ(no_file.exit_code, 2) << no_file.output;
  EXPECT_THAT(no_file.output, HasSubstr("--update-expected"));
}

TEST(RunExitStatus, SkipAccuracyCheckTurnsAMismatchIntoPassDueToSkip) {
  const GateZoo& z = gate_zoo();
  // The planted scale fails the check...
  auto strict = z.run("strict", "--accuracy --only scaled --tol 0.01");
  ASSERT_EQ(strict.exit_code, 1) << strict.output;
  auto strict_rows = read_csv(accuracy_csv(z.dir.file("strict"), "gate"));
  ASSERT_EQ(strict_rows.size(), 1u);
  ASSERT_EQ(strict_rows[0].at("accuracy"), "fail_accuracy") << strict_rows[0].at("reason");
  // ... and with --skip-accuracy-check it is upstream's pass_due_to_skip, the mismatch kept.
  auto skipped = z.run("skipped", "--accuracy --only scaled --tol 0.01 --skip-accuracy-check");
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;
  auto rows = read_csv(accuracy_csv(z.dir.file("skipped"), "gate"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("accuracy"), "pass_due_to_skip");
  EXPECT_THAT(rows[0].at("reason"), HasSubstr("not enforced (--skip-accuracy-check)"));
  EXPECT_THAT(rows[0].at("reason"), HasSubstr("passes with tol >="));
}

TEST(RunExitStatus, ToleranceModePrintsEachModelsPassingToleranceAndTheOldFormNamesTol) {
  const GateZoo& z = gate_zoo();
  auto mode = z.run("tolerance", "--tolerance --only good");
  EXPECT_EQ(mode.exit_code, 0) << mode.output;
  EXPECT_THAT(mode.output, HasSubstr("min_passing_tol"));
  auto rows = read_csv(accuracy_csv(z.dir.file("tolerance"), "gate"));
  ASSERT_EQ(rows.size(), 1u);
  // The printed figure is the row's.
  EXPECT_THAT(lines_with(mode.output, "| good"), HasSubstr(rows[0].at("min_passing_tol")));

  auto old_form = z.run("old", "--accuracy --tolerance 0.01");
  EXPECT_EQ(old_form.exit_code, 2) << old_form.output;
  EXPECT_THAT(old_form.output, HasSubstr("--tol 0.01"));
}

TEST(RunExitStatus, ExcludeExactAndNoSkipSelectAsUpstream) {
  const GateZoo& z = gate_zoo();
  auto excluded = z.run("excluded", "--accuracy --exclude-exact raiser --exclude-exact scaled --exclude-exact conv -d cpu");
  EXPECT_EQ(excluded.exit_code, 0) << excluded.output;
  auto rows = read_csv(accuracy_csv(z.dir.file("excluded"), "gate"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("name"), "good");

  // A yaml that skips the good model: skipped without --no-skip, run with it.
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites");
  write_text(suites + "/skips.yaml", "skip:\n  all:\n    - good\n");
  make_zoo(zoo, suites, "skips", {{"good", "mlp"}});
  const std::string common = "run --suite skips --accuracy --suites-dir " + quote(suites) +
                             " --zoo " + quote(zoo) + " --output-directory ";
  auto skipped = zt::run_command(zoobench_command(common + quote(dir.file("a"))) + " 2>&1");
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;
  EXPECT_FALSE(fs::exists(accuracy_csv(dir.file("a"), "skips")) &&
               !read_csv(accuracy_csv(dir.file("a"), "skips")).empty())
      << skipped.output;
  auto run = zt::run_command(zoobench_command(common + quote(dir.file("b")) + " --no-skip") + " 2>&1");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  auto no_skip_rows = read_csv(accuracy_csv(dir.file("b"), "skips"));
  ASSERT_EQ(no_skip_rows.size(), 1u) << run.output;
  EXPECT_EQ(no_skip_rows[0].at("accuracy"), "pass");
}

// -q: warnings and errors only; -v: debug messages too (the default shows info), such as each
// model process's command line.
TEST(RunExitStatus, QuietAndVerboseSetTheLogLevel) {
  const GateZoo& z = gate_zoo();
  auto verbose = z.run("levels", "--accuracy -k '^good$' -v");
  // Run again with --resume: nothing to do, which the run says at info level.
  auto normal = z.run("levels", "--accuracy -k '^good$' --resume");
  auto quiet = z.run("levels", "--accuracy -k '^good$' --resume -q");
  for (const auto* run : {&normal, &quiet, &verbose}) ASSERT_EQ(run->exit_code, 0) << run->output;
  EXPECT_THAT(verbose.output, HasSubstr("zoobench debug: good (jit): "));
  EXPECT_THAT(normal.output, HasSubstr("zoobench info: resume: good already has its rows"));
  EXPECT_THAT(normal.output, Not(HasSubstr("zoobench debug")));
  EXPECT_THAT(quiet.output, Not(HasSubstr("zoobench info")));
  EXPECT_THAT(quiet.output, HasSubstr("summary:"));  // the results still print
}

// --channels-last lays out a conv model's weights and inputs NHWC for eager, jit and the Python
// module alike (the layouts themselves: ChannelsLast.* in the unit tests): all still agree.
TEST(RunExitStatus, ChannelsLastRunsTheReferenceAndTheBackendsInNhwc) {
  const GateZoo& z = gate_zoo();
  auto run = z.run("nhwc", "--accuracy --only conv --channels-last --backend jit,python_eager");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (const char* backend : {"jit", "python_eager"}) {
    auto rows = read_csv(accuracy_csv(z.dir.file("nhwc"), "gate", backend));
    ASSERT_EQ(rows.size(), 1u) << backend;
    EXPECT_EQ(rows[0].at("accuracy"), "pass") << backend << ": " << rows[0].at("reason");
  }
  auto aoti = z.run("nhwc_aoti", "--accuracy --only conv --channels-last --backend aot_inductor");
  EXPECT_EQ(aoti.exit_code, 2) << aoti.output;
  EXPECT_THAT(aoti.output, HasSubstr("compiled for the layout"));
}

// Nothing that cannot run is started: the reason and exit 2, no row, no model log.
TEST(RunRefusals, WhatCannotRunHereIsRefusedBeforeAnyModelStarts) {
  const GateZoo& z = gate_zoo();
  struct Case {
    std::string flags, message;
  };
  std::vector<Case> cases = {
      {"--backend jit --training --optimizer rmsprop", "rmsprop"},
      {"--backend aot_inductor --training", "--backend aot_inductor cannot run here"},
      {"--backend jit --save-outputs " + quote(z.dir.file("rows.csv")), "is a file"},
      {"--backend jit --freezing", "--freezing means nothing to jit"},
      {"--inductor --backend jit", "give one of the two"},
  };
  if (!listed_as_available("cudagraphs"))
    cases.push_back({"--backend cudagraphs", "cudagraphs needs CUDA"});
  else
    cases.push_back({"--backend cudagraphs --devices cpu", "cudagraphs needs a CUDA device"});
  if (!listed_as_available("inductor"))
    cases.push_back({"--backend jit,inductor", "--backend inductor cannot run here"});
  write_text(z.dir.file("rows.csv"), "not a folder\n");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flags);
    const std::string out = z.dir.file("refused");
    auto run = z.run("refused", "--accuracy " + c.flags);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr(c.message));
    EXPECT_FALSE(fs::exists(fs::path(out) / "logs")) << "a model started:\n" << run.output;
  }
}

// Upstream's flags that zoobench lacks: exit 2, each named with zoobench's way to the same end,
// before any model starts (not CLI11's "The following argument was not expected"). -n is
// --repeat; --ci says once which of upstream's --ci effects it applies.
TEST(RunRefusals, UpstreamFlagsZoobenchLacksNameItsWayAndCiSaysWhatItApplies) {
  const GateZoo& z = gate_zoo();
  auto batch = z.run("upstream_only", "--accuracy --only good --batch_size 8");
  EXPECT_EQ(batch.exit_code, 2) << batch.output;
  EXPECT_THAT(batch.output,
              HasSubstr("--batch_size (upstream's): zoobench spells it --batch-size N"));
  EXPECT_THAT(batch.output, Not(HasSubstr("not expected")));
  auto two = z.run("upstream_only", "--accuracy --only good --threads 4 --print-graph-breaks");
  EXPECT_EQ(two.exit_code, 2) << two.output;
  EXPECT_THAT(two.output, HasSubstr("OMP_NUM_THREADS"));
  EXPECT_THAT(two.output, HasSubstr("TORCH_LOGS=graph_breaks"));
  EXPECT_FALSE(fs::exists(fs::path(z.dir.file("upstream_only")) / "logs")) << two.output;

  auto ci = z.run("ci", "--accuracy --performance --only good --ci -n 3 --warmup 1");
  EXPECT_EQ(ci.exit_code, 0) << ci.output;
  const auto count = [&](const std::string& text) {
    std::size_t n = 0;
    for (auto at = ci.output.find(text); at != std::string::npos; at = ci.output.find(text, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("--ci: applied as upstream's"), 1u) << ci.output;
  EXPECT_EQ(count("--ci: not applied: translation validation"), 1u) << ci.output;
  const auto rows = read_csv(performance_csv(z.dir.file("ci"), "gate"));
  ASSERT_EQ(rows.size(), 1u) << ci.output;
  EXPECT_EQ(rows[0].at("repeat"), "3");
}

// `report --baseline` gates on regressions (exit 1) unless told not to.
TEST(ReportExitStatus, ARegressionAgainstTheBaselineExits1) {
  zt::ScratchDir dir;
  const std::string header = "dev,name,batch_size,accuracy\n";
  write_text(dir.file("before_accuracy.csv"), header + "cpu,a,1,pass\ncpu,b,1,pass\n");
  write_text(dir.file("after_accuracy.csv"), header + "cpu,a,1,pass\ncpu,b,1,fail_accuracy\n");
  write_text(dir.file("same_accuracy.csv"), header + "cpu,a,1,pass\ncpu,b,1,pass\n");
  auto report = [&](const std::string& now, const std::string& extra) {
    return zt::run_command(zoobench_command("report " + quote(dir.file(now)) + " --baseline " +
                                            quote(dir.file("before_accuracy.csv")) +
                                            " --markdown " + quote(dir.file("r.md")) + extra) +
                           " 2>&1");
  };
  auto regressed = report("after_accuracy.csv", "");
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  EXPECT_THAT(regressed.output, HasSubstr("1 model(s) regressed"));
  auto allowed = report("after_accuracy.csv", " --allow-regressions");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  auto same = report("same_accuracy.csv", "");
  EXPECT_EQ(same.exit_code, 0) << same.output;
}

}  // namespace
