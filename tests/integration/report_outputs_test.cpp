// `zoobench report`, `merge` and `compare` over what a run wrote, through the real binary: a folder that
// holds zoobench's result file and its `--output-format upstream` twin counts each model once
// (the twin is left out, and a log line says so), and `-` names standard output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "integration_helpers.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;

// One accuracy run of two good models with upstream's file beside zoobench's.
struct RunWithTwin {
  zt::ScratchDir dir;
  std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  std::string twin = out + "/jit_good_float32_inference_cpu_accuracy.csv";

  RunWithTwin() {
    make_zoo(zoo, suites, "good", {{"a_mlp", "mlp"}, {"b_mlp", "mlp"}});
    auto run = zt::run_command(
        zoobench_command("run --suite good --accuracy --backend jit --suites-dir " + quote(suites) +
                         " --zoo " + quote(zoo) + " --output-directory " + quote(out) +
                         " --output-format upstream") +
        " 2>&1");
    EXPECT_EQ(run.exit_code, 0) << run.output;
  }

  // `zoobench <arguments>` run in the scratch folder, stdout and stderr apart.
  struct Output {
    int exit_code;
    std::string out, err;
  };
  Output run_here(const std::string& arguments) const {
    // In a subshell: run_command sends the command's stderr to its stdout.
    auto result = zt::run_command("(cd " + quote(dir.path()) + " && " +
                                  zoobench_command(arguments) + " >stdout.txt 2>stderr.txt)");
    return {result.exit_code, read_text(dir.file("stdout.txt")), read_text(dir.file("stderr.txt"))};
  }
};

TEST(ReportOutputs, AFolderWithUpstreamsTwinCountsEachModelOnceAndDashIsStdout) {
  RunWithTwin run;
  ASSERT_TRUE(fs::exists(run.twin)) << run.twin;
  ASSERT_TRUE(fs::exists(accuracy_csv(run.out, "good")));

  auto report = run.run_here("report results --markdown -");
  ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
  EXPECT_THAT(report.out, HasSubstr("pass rate 100.0% (2/2)"));
  EXPECT_THAT(report.out, ::testing::Not(HasSubstr("jit_good_float32")));  // not a source
  EXPECT_THAT(report.err, HasSubstr("report: left out results/jit_good_float32_inference_cpu_"
                                    "accuracy.csv: the upstream-format twin of results/good_jit_"
                                    "inference_float32_cpu_accuracy.csv"));
  EXPECT_FALSE(fs::exists(run.dir.file("-"))) << "a file named '-'";

  // The HTML to stdout, the markdown to a file: where the markdown went goes to stderr.
  auto html = run.run_here("report results --html - --markdown r.md");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0u) << html.out.substr(0, 200);
  EXPECT_THAT(html.err, HasSubstr("markdown report: r.md"));
  EXPECT_THAT(read_text(run.dir.file("r.md")), HasSubstr("pass rate 100.0% (2/2)"));
  EXPECT_FALSE(fs::exists(run.dir.file("-")));

  auto both = run.run_here("report results --html - --markdown -");
  EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
  EXPECT_THAT(both.err, HasSubstr("both name standard output"));
}

TEST(ReportOutputs, MergeLeavesTheTwinOut) {
  RunWithTwin run;
  auto merge = run.run_here("merge results -o merged/accuracy.csv");
  ASSERT_EQ(merge.exit_code, 0) << merge.out << merge.err;
  EXPECT_THAT(merge.out, HasSubstr("merged 2 accuracy rows from 1 files"));
  EXPECT_THAT(merge.err, HasSubstr("merge: left out results/jit_good_float32_inference_cpu_"
                                   "accuracy.csv"));
  EXPECT_EQ(count_names(read_csv(run.dir.file("merged/accuracy.csv"))),
            (std::map<std::string, int>{{"a_mlp", 1}, {"b_mlp", 1}}));
}

// compare reads the folder as report does: each model once, not once more from the twin.
TEST(ReportOutputs, CompareCountsEachModelOnceBesideTheTwin) {
  RunWithTwin run;
  std::ofstream(run.dir.file("expected.csv")) << "name,accuracy,graph_breaks\na_mlp,pass,\nb_mlp,pass,\n";
  auto compare = run.run_here("compare results --expected expected.csv");
  ASSERT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("compare: 2 PASS, 0 XFAIL, 0 FAIL")) << compare.out;
  EXPECT_THAT(compare.err, HasSubstr("compare: left out results/jit_good_float32_inference_cpu_"
                                     "accuracy.csv"));
}

}  // namespace
