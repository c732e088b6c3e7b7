// The expected-results gate: the five verdicts with upstream check_accuracy.py's rules, flaky
// models, exit statuses; from hand-written CSV/JSON files as a CI job would have them.
#include "zoobench/report/expected.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/testing.h"
#include "zoobench/results/result_files.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

namespace zoobench::report {
namespace {

std::vector<ResultRow> rows_of(const std::string& path) { return load_result_file(path).rows; }

const ExpectedCheck& check_for(const ExpectedComparison& comparison, const std::string& model) {
  for (const auto& check : comparison.checks) {
    if (check.model == model) return check;
  }
  throw std::runtime_error("no check for " + model);
}

class ExpectedGate : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file_atomically(dir.file("actual_accuracy.csv"),
                          "dev,name,batch_size,accuracy,backend,mode,dtype\n"
                          "cpu,a,1,pass,jit,inference,float32\n"
                          "cpu,b,1,fail_accuracy,jit,inference,float32\n"
                          "cpu,c,1,fail_to_run,jit,inference,float32\n"
                          "cpu,d,1,pass,jit,inference,float32\n"
                          "cpu,f,1,pass_due_to_skip,jit,inference,float32\n"
                          "cpu,g,1,pass,jit,inference,float32\n"
                          "cpu,h,1,eager_two_runs_differ,jit,inference,float32\n");
    // Upstream's expected format: name,accuracy,graph_breaks.
    write_file_atomically(dir.file("expected.csv"),
                          "name,accuracy,graph_breaks\n"
                          "a,pass,0\n"
                          "b,fail_accuracy,0\n"
                          "c,pass,0\n"
                          "d,fail_accuracy,0\n"
                          "e,pass,0\n"
                          "f,pass,0\n");
  }
  zoobench::testing::ScratchDir dir;
};

TEST_F(ExpectedGate, FiveVerdictsWithUpstreamRules) {
  ExpectedComparison comparison = compare_with_expected(rows_of(dir.file("actual_accuracy.csv")),
                                                        rows_of(dir.file("expected.csv")), {});
  EXPECT_EQ(check_for(comparison, "a").verdict, Verdict::kPass);
  EXPECT_EQ(check_for(comparison, "b").verdict, Verdict::kXfail);
  EXPECT_EQ(check_for(comparison, "c").verdict, Verdict::kFail);
  EXPECT_EQ(check_for(comparison, "d").verdict, Verdict::kImproved);
  EXPECT_EQ(check_for(comparison, "e").verdict, Verdict::kMissing);
  // Only `pass` is a pass, as upstream: pass_due_to_skip where pass was expected regressed.
  EXPECT_EQ(check_for(comparison, "f").verdict, Verdict::kFail);
  // Not in the expected file: passing is an improvement, anything else a failure.
  EXPECT_EQ(check_for(comparison, "g").verdict, Verdict::kImproved);
  EXPECT_EQ(check_for(comparison, "h").verdict, Verdict::kFail);
  EXPECT_EQ(comparison.count(Verdict::kFail), 3);
  EXPECT_TRUE(comparison.gate_fails());
  // Missing rows come after the actual rows.
  EXPECT_EQ(comparison.checks.back().model, "e");

  std::string printed = format_expected_comparison(comparison, "expected.csv", false);
  EXPECT_NE(printed.find(std::string("a") + std::string(33, ' ') + "  PASS\n"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find(std::string("c") + std::string(33, ' ') +
                         "  FAIL:     accuracy=fail_to_run, expected=pass\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Error: 3 models have accuracy status regressed:\n    c f h\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Improvement: 2 models have accuracy status improved:\n    d g\n"),
            std::string::npos);
  EXPECT_NE(printed.find("1 models are expected but have no row in the results:\n    e\n"),
            std::string::npos);
  EXPECT_NE(printed.find("--update-expected"), std::string::npos);
}

TEST_F(ExpectedGate, GateOutcomes) {
  // Drop the regressions and the missing model: PASS, XFAIL and IMPROVED pass the gate...
  write_file_atomically(
      dir.file("ok_accuracy.csv"),
      "dev,name,batch_size,accuracy\ncpu,a,1,pass\ncpu,b,1,fail_accuracy\ncpu,d,1,pass\n");
  write_file_atomically(dir.file("ok_expected.csv"),
                        "name,accuracy\na,pass\nb,fail_accuracy\nd,fail_accuracy\n");
  ExpectedComparison ok = compare_with_expected(rows_of(dir.file("ok_accuracy.csv")),
                                                rows_of(dir.file("ok_expected.csv")), {});
  EXPECT_FALSE(ok.gate_fails());
  // ...unless improvements must be recorded first, as upstream insists.
  EXPECT_TRUE(ok.gate_fails(/*fail_on_improved=*/true));
  // A missing model alone fails it.
  write_file_atomically(dir.file("more_expected.csv"),
                        "name,accuracy\na,pass\nb,fail_accuracy\nzzz,pass\n");
  ExpectedComparison missing = compare_with_expected(rows_of(dir.file("ok_accuracy.csv")),
                                                     rows_of(dir.file("more_expected.csv")), {});
  EXPECT_EQ(missing.count(Verdict::kMissing), 1);
  EXPECT_TRUE(missing.gate_fails());
}

TEST_F(ExpectedGate, FlakyModelsAreReportedButDoNotGate) {
  write_file_atomically(dir.file("suite.yaml"),
                        "batch_size:\n  a: 2\nzoobench:\n  flaky: [c, e, f, h]\n");
  std::vector<std::string> flaky = read_flaky_models(dir.file("suite.yaml"));
  ASSERT_EQ(flaky, (std::vector<std::string>{"c", "e", "f", "h"}));
  ExpectedComparison comparison = compare_with_expected(
      rows_of(dir.file("actual_accuracy.csv")), rows_of(dir.file("expected.csv")),
      std::set<std::string>(flaky.begin(), flaky.end()));
  EXPECT_EQ(check_for(comparison, "c").label(), "FAIL_BUT_FLAKY");
  EXPECT_EQ(check_for(comparison, "e").label(), "MISSING_BUT_FLAKY");
  EXPECT_EQ(comparison.flaky_changes(), 4);
  EXPECT_FALSE(comparison.gate_fails());
  EXPECT_NE(
      format_expected_comparison(comparison, "x.csv", false).find("4 flaky (reported, not gating)"),
      std::string::npos);
}

TEST_F(ExpectedGate, FlakyYamlWithoutTheKeyAndWithABadValue) {
  write_file_atomically(dir.file("plain.yaml"), "skip:\n  all: []\n");
  EXPECT_TRUE(read_flaky_models(dir.file("plain.yaml")).empty());
  write_file_atomically(dir.file("bad.yaml"), "zoobench:\n  flaky: resnet18\n");
  EXPECT_THROW(read_flaky_models(dir.file("bad.yaml")), UsageError);
}

TEST_F(ExpectedGate, DevicesInTheResultsAreComparedSeparately) {
  write_file_atomically(dir.file("two_accuracy.csv"),
                        "dev,name,batch_size,accuracy\ncpu,a,1,pass\ncuda,a,1,fail_accuracy\n");
  // Without a dev column the expected row applies to both; with one, only to its device.
  write_file_atomically(dir.file("e1.csv"), "name,accuracy\na,pass\n");
  ExpectedComparison shared =
      compare_with_expected(rows_of(dir.file("two_accuracy.csv")), rows_of(dir.file("e1.csv")), {});
  ASSERT_EQ(shared.checks.size(), 2u);
  EXPECT_EQ(shared.checks[0].where, "cpu");
  EXPECT_EQ(shared.checks[1].verdict, Verdict::kFail);
  write_file_atomically(dir.file("e2.csv"),
                        "name,accuracy,dev\na,pass,cpu\na,fail_accuracy,cuda\n");
  ExpectedComparison per_device =
      compare_with_expected(rows_of(dir.file("two_accuracy.csv")), rows_of(dir.file("e2.csv")), {});
  EXPECT_EQ(per_device.count(Verdict::kPass), 1);
  EXPECT_EQ(per_device.count(Verdict::kXfail), 1);
  EXPECT_FALSE(per_device.gate_fails());
  // What --update-expected writes reproduces this expectation.
  EXPECT_EQ(expected_csv_from(rows_of(dir.file("two_accuracy.csv"))),
            "name,accuracy,dev\na,pass,cpu\na,fail_accuracy,cuda\n");
}

TEST_F(ExpectedGate, JsonResultsWork) {
  write_file_atomically(dir.file("run_accuracy.json"),
                        R"({"format": "zoobench-results/1", "kind": "accuracy", "context": {},
                            "records": [{"kind": "accuracy", "cells": {"dev": "cpu", "name": "a",
                            "batch_size": 1, "accuracy": "pass"}, "detail": {}}]})");
  ExpectedComparison comparison = compare_with_expected(rows_of(dir.file("run_accuracy.json")),
                                                        rows_of(dir.file("expected.csv")), {});
  EXPECT_EQ(check_for(comparison, "a").verdict, Verdict::kPass);
  EXPECT_EQ(comparison.count(Verdict::kMissing), 5);
}

// The CLI's exit statuses, when the zoobench binary has been built beside the tests.
TEST_F(ExpectedGate, CliExitStatuses) {
  std::string zoobench = zoobench::testing::binary_dir() + "/zoobench";
  if (!std::filesystem::exists(zoobench)) GTEST_SKIP() << "zoobench binary not built: " << zoobench;
  auto run = [&](const std::string& args) {
    return zoobench::testing::run_command(zoobench + " compare " + args).exit_code;
  };
  write_file_atomically(dir.file("ok_accuracy.csv"),
                        "dev,name,batch_size,accuracy\ncpu,a,1,pass\ncpu,d,1,pass\n");
  EXPECT_EQ(run(dir.file("actual_accuracy.csv") + " --expected " + dir.file("expected.csv")), 1);
  EXPECT_EQ(run(dir.file("actual_accuracy.csv") + " --expected " + dir.file("expected.csv") +
                " --flaky c --flaky e --flaky f --flaky h"),
            0);
  write_file_atomically(dir.file("small_expected.csv"), "name,accuracy\na,pass\nd,fail_accuracy\n");
  EXPECT_EQ(run(dir.file("ok_accuracy.csv") + " --expected " + dir.file("small_expected.csv")), 0);
  EXPECT_EQ(run(dir.file("ok_accuracy.csv") + " --expected " + dir.file("small_expected.csv") +
                " --fail-on-improved"),
            1);
  EXPECT_EQ(run(dir.file("nope.csv") + " --expected " + dir.file("expected.csv")), 2);
  EXPECT_EQ(run(dir.file("ok_accuracy.csv") + " --expected " + dir.file("small_expected.csv") +
                " --update-expected"),
            0);
  EXPECT_EQ(read_text_file(dir.file("small_expected.csv")), "name,accuracy\na,pass\nd,pass\n");
}

}  // namespace
}  // namespace zoobench::report
