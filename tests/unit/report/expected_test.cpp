// The expected-results gate: the verdicts with upstream check_accuracy.py's rules (PASS, XFAIL,
// FAIL, IMPROVED, MISSING_EXPECTED; MISSING noted, not gated), flaky models, exit statuses; the
// dynamo counters with check_graph_breaks.py's; upstream's ci_expected_accuracy format (blank
// lines, 3 and 5 columns, empty cells) read as it is; from hand-written CSV/JSON files as a CI job
// would have them.
#include "zoobench/report/expected.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/testing.h"
#include "zoobench/results/result_files.h"
#include "zoobench/results/status.h"
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

TEST_F(ExpectedGate, VerdictsWithUpstreamRules) {
  ExpectedComparison comparison = compare_with_expected(rows_of(dir.file("actual_accuracy.csv")),
                                                        rows_of(dir.file("expected.csv")), {});
  EXPECT_EQ(check_for(comparison, "a").verdict, Verdict::kPass);
  EXPECT_EQ(check_for(comparison, "b").verdict, Verdict::kXfail);
  EXPECT_EQ(check_for(comparison, "c").verdict, Verdict::kFail);
  EXPECT_EQ(check_for(comparison, "d").verdict, Verdict::kImproved);
  EXPECT_EQ(check_for(comparison, "e").verdict, Verdict::kMissing);
  // Only `pass` is a pass, as upstream: pass_due_to_skip where pass was expected regressed.
  EXPECT_EQ(check_for(comparison, "f").verdict, Verdict::kFail);
  // Not in the expected file: MISSING_EXPECTED, passing or not, as upstream.
  EXPECT_EQ(check_for(comparison, "g").verdict, Verdict::kMissingExpected);
  EXPECT_EQ(check_for(comparison, "h").verdict, Verdict::kMissingExpected);
  EXPECT_EQ(comparison.count(Verdict::kFail), 2);
  EXPECT_EQ(comparison.count(Verdict::kMissingExpected), 2);
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
  EXPECT_NE(
      printed.find(std::string("g") + std::string(33, ' ') +
                   "  MISSING_EXPECTED: accuracy=pass, expected=(not in the expected file)\n"),
      std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Error: 2 models have accuracy status regressed:\n    c f\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Error: 2 models have a result but no row in the expected file "
                         "(MISSING_EXPECTED):\n    g h\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Improvement: 1 models have accuracy status improved:\n    d\n"),
            std::string::npos);
  EXPECT_NE(printed.find("Improvements fail the gate, as upstream's check_accuracy.py"),
            std::string::npos);
  // e: an expected model with no result is a note, never a line of its own.
  EXPECT_NE(printed.find("Note: 1 models of the expected file have no row in the results "
                         "(another partition's, or not run): not checked, as upstream's "
                         "check_accuracy.py:\n    e\n"),
            std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("\ne "), std::string::npos) << printed;
  EXPECT_NE(printed.find("2 MISSING_EXPECTED (1 expected with no result, not gating) -> gate "
                         "FAILED"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("--update-expected"), std::string::npos);
}

// An expected file naming a model twice failed a passing run with the reason of the row it did
// not match. Refused, naming the model and both rows; rows that differ by device or backend are
// two expectations, not one named twice.
TEST_F(ExpectedGate, AModelNamedTwiceIsRefusedWithBothRows) {
  write_file_atomically(dir.file("twice.csv"), "name,accuracy\na,pass\nb,pass\na,fail_accuracy\n");
  try {
    require_one_expectation_per_model(rows_of(dir.file("twice.csv")), "twice.csv");
    FAIL() << "a model named twice was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("twice.csv: a is named twice (rows 1 and 3)"),
              std::string::npos)
        << e.what();
  }
  write_file_atomically(dir.file("two_devices.csv"),
                        "dev,name,accuracy\ncpu,a,pass\ncuda,a,fail_accuracy\n");
  EXPECT_NO_THROW(
      require_one_expectation_per_model(rows_of(dir.file("two_devices.csv")), "two_devices.csv"));
  EXPECT_NO_THROW(require_one_expectation_per_model(rows_of(dir.file("expected.csv")), "e.csv"));
}

TEST_F(ExpectedGate, GateOutcomes) {
  // Drop the regressions: PASS and XFAIL pass the gate; IMPROVED fails it until the expected
  // file records it, as upstream insists, unless improvements are allowed.
  write_file_atomically(
      dir.file("ok_accuracy.csv"),
      "dev,name,batch_size,accuracy\ncpu,a,1,pass\ncpu,b,1,fail_accuracy\ncpu,d,1,pass\n");
  write_file_atomically(dir.file("ok_expected.csv"),
                        "name,accuracy\na,pass\nb,fail_accuracy\nd,fail_accuracy\n");
  ExpectedComparison ok = compare_with_expected(rows_of(dir.file("ok_accuracy.csv")),
                                                rows_of(dir.file("ok_expected.csv")), {});
  EXPECT_TRUE(ok.gate_fails());
  EXPECT_FALSE(ok.gate_fails(/*allow_improved=*/true));
  // An expected model with no result (another partition's) does not fail it...
  write_file_atomically(dir.file("more_expected.csv"),
                        "name,accuracy\na,pass\nb,fail_accuracy\nd,pass\nzzz,pass\n");
  ExpectedComparison missing = compare_with_expected(rows_of(dir.file("ok_accuracy.csv")),
                                                     rows_of(dir.file("more_expected.csv")), {});
  EXPECT_EQ(missing.count(Verdict::kMissing), 1);
  EXPECT_FALSE(missing.gate_fails());
  // ... a result the expected file does not name does, even passing and with improvements
  // allowed.
  write_file_atomically(dir.file("fewer_expected.csv"), "name,accuracy\na,pass\nb,fail_accuracy\n");
  ExpectedComparison unnamed = compare_with_expected(rows_of(dir.file("ok_accuracy.csv")),
                                                     rows_of(dir.file("fewer_expected.csv")), {});
  EXPECT_EQ(check_for(unnamed, "d").label(), "MISSING_EXPECTED");
  EXPECT_TRUE(unnamed.gate_fails(/*allow_improved=*/true));
}

TEST_F(ExpectedGate, FlakyModelsAreReportedButDoNotGate) {
  write_file_atomically(dir.file("suite.yaml"),
                        "batch_size:\n  a: 2\nzoobench:\n  flaky: [c, e, f, h]\n");
  std::vector<std::string> flaky = read_flaky_models(dir.file("suite.yaml"));
  ASSERT_EQ(flaky, (std::vector<std::string>{"c", "e", "f", "h"}));
  const std::set<std::string> flaky_set(flaky.begin(), flaky.end());
  // The expected file names every model of the results (g, h added).
  write_file_atomically(dir.file("all_expected.csv"),
                        read_text_file(dir.file("expected.csv")) + "g,pass,0\nh,pass,0\n");
  ExpectedComparison comparison = compare_with_expected(
      rows_of(dir.file("actual_accuracy.csv")), rows_of(dir.file("all_expected.csv")), flaky_set);
  EXPECT_EQ(check_for(comparison, "c").label(), "FAIL_BUT_FLAKY");
  EXPECT_EQ(check_for(comparison, "h").label(), "FAIL_BUT_FLAKY");
  EXPECT_EQ(check_for(comparison, "e").label(), "MISSING");      // not gated, flaky or not
  EXPECT_EQ(comparison.flaky_changes(), 3);                      // c, f, h
  EXPECT_FALSE(comparison.gate_fails(/*allow_improved=*/true));  // d improved, not flaky
  EXPECT_NE(
      format_expected_comparison(comparison, "x.csv", true).find("3 flaky (reported, not gating)"),
      std::string::npos);
  // As upstream, a flaky model the expected file does not name still fails the gate.
  ExpectedComparison unnamed = compare_with_expected(rows_of(dir.file("actual_accuracy.csv")),
                                                     rows_of(dir.file("expected.csv")), flaky_set);
  EXPECT_EQ(check_for(unnamed, "h").label(), "MISSING_EXPECTED");
  EXPECT_TRUE(unnamed.gate_fails(/*allow_improved=*/true));
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
  // What --update-expected writes reproduces this expectation (upstream's three columns first).
  EXPECT_EQ(expected_csv_from(rows_of(dir.file("two_accuracy.csv"))),
            "name,accuracy,graph_breaks,dev\na,pass,0,cpu\na,fail_accuracy,0,cuda\n");
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
  // g and h have no expected row: MISSING_EXPECTED fails, flaky or not.
  EXPECT_EQ(run(dir.file("actual_accuracy.csv") + " --expected " + dir.file("expected.csv") +
                " --flaky c --flaky e --flaky f --flaky g --flaky h --allow-improved"),
            1);
  write_file_atomically(dir.file("all_expected.csv"),
                        read_text_file(dir.file("expected.csv")) + "g,pass,0\nh,pass,0\n");
  EXPECT_EQ(run(dir.file("actual_accuracy.csv") + " --expected " + dir.file("all_expected.csv") +
                " --flaky c --flaky f --flaky h --allow-improved"),
            0);
  // An improvement fails, as upstream (--fail-on-improved, the default, still accepted), unless
  // --allow-improved.
  write_file_atomically(dir.file("small_expected.csv"), "name,accuracy\na,pass\nd,fail_accuracy\n");
  const std::string small =
      dir.file("ok_accuracy.csv") + " --expected " + dir.file("small_expected.csv");
  EXPECT_EQ(run(small), 1);
  EXPECT_EQ(run(small + " --fail-on-improved"), 1);
  EXPECT_EQ(run(small + " --allow-improved"), 0);
  EXPECT_EQ(run(small + " --allow-improved --fail-on-improved"), 2);
  // Expected models with no result (another partition's) are a note.
  write_file_atomically(dir.file("shards_expected.csv"), "name,accuracy\na,pass\nd,pass\nz,pass\n");
  const auto shard =
      zoobench::testing::run_command(zoobench + " compare " + dir.file("ok_accuracy.csv") +
                                     " --expected " + dir.file("shards_expected.csv"));
  EXPECT_EQ(shard.exit_code, 0) << shard.output;
  EXPECT_NE(shard.output.find("Note: 1 models of the expected file have no row"), std::string::npos)
      << shard.output;
  EXPECT_EQ(run(dir.file("nope.csv") + " --expected " + dir.file("expected.csv")), 2);
  EXPECT_EQ(run(dir.file("ok_accuracy.csv") + " --expected " + dir.file("small_expected.csv") +
                " --update-expected"),
            0);
  EXPECT_EQ(read_text_file(dir.file("small_expected.csv")),
            "name,accuracy,graph_breaks\na,pass,0\nd,pass,0\n");
}

// The counter checks of one model, in gated_counter_columns()'s order.
std::vector<CounterCheck> counters_for(const ExpectedComparison& comparison,
                                       const std::string& model) {
  std::vector<CounterCheck> out;
  for (const auto& check : comparison.counter_checks) {
    if (check.model == model) out.push_back(check);
  }
  return out;
}

// Upstream's newer ci_expected_accuracy files: the 5-column header, rows separated by blank lines
// (its merge-conflict linter), empty cells, upstream's eager_fail_to_run.
TEST_F(ExpectedGate, UpstreamFiveColumnFileWithBlankLinesIsRead) {
  write_file_atomically(dir.file("inductor_huggingface_inference.csv"),
                        "name,accuracy,graph_breaks,calls_captured,fallbacks_to_eager\n\n\n\n"
                        "a,pass,0,395,0\n\n\n\n"
                        "b,eager_fail_to_run,0,0,0\n\n\n\n"
                        "c,pass,0,,\n\n\n\n"
                        "d,pass,4,1780,0\n");
  const std::vector<ResultRow> expected = rows_of(dir.file("inductor_huggingface_inference.csv"));
  ASSERT_EQ(expected.size(), 4u);
  EXPECT_EQ(cell(expected[2], "calls_captured"), "");
  write_file_atomically(dir.file("hf_accuracy.csv"),
                        "dev,name,batch_size,accuracy,graph_breaks,calls_captured\n"
                        "cuda,a,1,pass,0,395\n"
                        "cuda,b,1,eager_fail_to_run,0,0\n"
                        "cuda,c,1,pass,0,400\n"
                        "cuda,d,1,pass,4,1780\n");
  ExpectedComparison comparison =
      compare_with_expected(rows_of(dir.file("hf_accuracy.csv")), expected, {});
  EXPECT_EQ(check_for(comparison, "b").verdict, Verdict::kXfail);
  EXPECT_EQ(comparison.count(Verdict::kPass), 3);
  // a and d: both counters; c: graph_breaks only (its calls_captured cell is empty); b: none
  // (not `pass`).
  EXPECT_EQ(counters_for(comparison, "a").size(), 2u);
  ASSERT_EQ(counters_for(comparison, "c").size(), 1u);
  EXPECT_EQ(counters_for(comparison, "c")[0].counter, "graph_breaks");
  EXPECT_TRUE(counters_for(comparison, "b").empty());
  EXPECT_EQ(comparison.counter_count(Verdict::kPass), 5);
  EXPECT_FALSE(comparison.gate_fails());
}

TEST(ExpectedStatuses, EagerFailToRunIsKnownAndMisspeltStatusesAreNot) {
  ASSERT_TRUE(parse_status("eager_fail_to_run").has_value());
  EXPECT_EQ(status_name(*parse_status("eager_fail_to_run")), "eager_fail_to_run");
  EXPECT_FALSE(is_passing(*parse_status("eager_fail_to_run")));
  EXPECT_NE(known_status_names().find("eager_fail_to_run"), std::string::npos);
  EXPECT_FALSE(parse_status("eager_fail_to_runn").has_value());
  EXPECT_FALSE(parse_status("passed").has_value());
}

TEST_F(ExpectedGate, GraphBreaksMoreFailFewerImprovedOnlyWherePassingAndFilled) {
  write_file_atomically(dir.file("gb_expected.csv"),
                        "name,accuracy,graph_breaks\n"
                        "more,pass,1\nfewer,pass,3\nsame,pass,2\n"
                        "failing,fail_accuracy,0\nnow_fails,pass,0\nempty,pass,0\n");
  write_file_atomically(dir.file("gb_accuracy.csv"),
                        "dev,name,batch_size,accuracy,graph_breaks\n"
                        "cpu,more,1,pass,2\ncpu,fewer,1,pass,1\ncpu,same,1,pass,2\n"
                        "cpu,failing,1,fail_accuracy,9\ncpu,now_fails,1,fail_to_run,9\n"
                        "cpu,empty,1,pass,\n");
  ExpectedComparison comparison = compare_with_expected(rows_of(dir.file("gb_accuracy.csv")),
                                                        rows_of(dir.file("gb_expected.csv")), {});
  ASSERT_EQ(counters_for(comparison, "more").size(), 1u);
  EXPECT_EQ(counters_for(comparison, "more")[0].verdict, Verdict::kFail);
  EXPECT_EQ(counters_for(comparison, "fewer")[0].verdict, Verdict::kImproved);
  EXPECT_EQ(counters_for(comparison, "same")[0].verdict, Verdict::kPass);
  // Not `pass` on both sides, or an empty cell: no counter verdict.
  EXPECT_TRUE(counters_for(comparison, "failing").empty());
  EXPECT_TRUE(counters_for(comparison, "now_fails").empty());
  EXPECT_TRUE(counters_for(comparison, "empty").empty());
  EXPECT_EQ(comparison.counters_not_compared.at("graph_breaks"), 1);
  EXPECT_TRUE(comparison.gate_fails());

  const std::string printed = format_expected_comparison(comparison, "gb_expected.csv", false);
  EXPECT_NE(printed.find("more" + std::string(30, ' ') + "  FAIL:" + std::string(15, ' ') +
                         "graph_breaks=2, expected=1\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Error: 1 models have new dynamo graph breaks or fewer calls "
                         "captured:\n    more\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Improvement: 1 models have fixed dynamo graph breaks:\n    fewer\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("counters: 1 PASS, 1 FAIL, 1 IMPROVED -> gate FAILED"), std::string::npos)
      << printed;

  // Fewer graph breaks alone fails the gate until the file records them, as upstream's
  // check_graph_breaks.py, unless improvements are allowed; a flaky model's increase is
  // reported and does not gate.
  write_file_atomically(dir.file("fewer_accuracy.csv"),
                        "dev,name,batch_size,accuracy,graph_breaks\ncpu,fewer,1,pass,1\n"
                        "cpu,more,1,pass,2\n");
  write_file_atomically(dir.file("fewer_expected.csv"),
                        "name,accuracy,graph_breaks\nfewer,pass,3\nmore,pass,1\n");
  ExpectedComparison fewer = compare_with_expected(
      rows_of(dir.file("fewer_accuracy.csv")), rows_of(dir.file("fewer_expected.csv")), {"more"});
  EXPECT_EQ(counters_for(fewer, "more")[0].label(), "FAIL_BUT_FLAKY");
  EXPECT_EQ(fewer.flaky_changes(), 1);
  EXPECT_TRUE(fewer.gate_fails());
  EXPECT_FALSE(fewer.gate_fails(/*allow_improved=*/true));
}

TEST_F(ExpectedGate, CallsCapturedMayDropFivePercent) {
  write_file_atomically(dir.file("cc_expected.csv"),
                        "name,accuracy,graph_breaks,calls_captured,fallbacks_to_eager\n"
                        "big_drop,pass,0,100,0\nsmall_drop,pass,0,100,0\nedge,pass,0,100,0\n"
                        "more,pass,0,100,0\n");
  // zoobench's JSON results keep calls_captured in detail.dynamo_stats.
  write_file_atomically(dir.file("cc_accuracy.json"), R"({"format": "zoobench-results/1",
      "kind": "accuracy", "context": {}, "records": [
      {"kind": "accuracy", "cells": {"name": "big_drop", "accuracy": "pass", "graph_breaks": 0},
       "detail": {"dynamo_stats": {"calls_captured": 94}}},
      {"kind": "accuracy", "cells": {"name": "small_drop", "accuracy": "pass", "graph_breaks": 0},
       "detail": {"dynamo_stats": {"calls_captured": 97}}},
      {"kind": "accuracy", "cells": {"name": "edge", "accuracy": "pass", "graph_breaks": 0},
       "detail": {"dynamo_stats": {"calls_captured": 95}}},
      {"kind": "accuracy", "cells": {"name": "more", "accuracy": "pass", "graph_breaks": 0},
       "detail": {"dynamo_stats": {"calls_captured": 250}}}]})");
  ExpectedComparison comparison = compare_with_expected(rows_of(dir.file("cc_accuracy.json")),
                                                        rows_of(dir.file("cc_expected.csv")), {});
  auto calls_captured = [&](const std::string& model) {
    for (const auto& check : counters_for(comparison, model)) {
      if (check.counter == "calls_captured") return check;
    }
    throw std::runtime_error("no calls_captured check for " + model);
  };
  EXPECT_EQ(calls_captured("big_drop").verdict, Verdict::kFail);  // 6% fewer
  EXPECT_EQ(calls_captured("small_drop").verdict, Verdict::kPass);
  EXPECT_EQ(calls_captured("edge").verdict, Verdict::kPass);  // exactly 5%: upstream's `<`
  EXPECT_EQ(calls_captured("more").verdict, Verdict::kPass);
  EXPECT_EQ(comparison.counter_count(Verdict::kFail), 1);
  EXPECT_EQ(comparison.counter_count(Verdict::kImproved), 0);
  EXPECT_TRUE(comparison.gate_fails());
  EXPECT_NE(format_expected_comparison(comparison, "cc.csv", false)
                .find("calls_captured=94, expected=100"),
            std::string::npos);
}

TEST(ExpectedCounters, CellsAreWholeNumbersOrAbsent) {
  EXPECT_EQ(parse_counter_cell("3"), 3);
  EXPECT_EQ(parse_counter_cell("3.0"), 3);  // pandas writes an int column with a NaN so
  EXPECT_FALSE(parse_counter_cell("").has_value());
  EXPECT_FALSE(parse_counter_cell("2.5").has_value());
  EXPECT_FALSE(parse_counter_cell("-1").has_value());
  EXPECT_FALSE(parse_counter_cell("many").has_value());
}

TEST_F(ExpectedGate, UpdateExpectedWritesUpstreamsThreeColumns) {
  write_file_atomically(dir.file("run_accuracy.csv"),
                        "dev,name,batch_size,accuracy,graph_breaks\n"
                        "cpu,zeta,1,pass,3\ncpu,alpha,1,fail_to_run,\n");
  EXPECT_EQ(expected_csv_from(rows_of(dir.file("run_accuracy.csv"))),
            "name,accuracy,graph_breaks\nalpha,fail_to_run,0\nzeta,pass,3\n");
}

// The CLI reads an upstream file as it is, gates on graph breaks and refuses a counter that is
// not a count.
TEST_F(ExpectedGate, CliGatesOnGraphBreaks) {
  std::string zoobench = zoobench::testing::binary_dir() + "/zoobench";
  if (!std::filesystem::exists(zoobench)) GTEST_SKIP() << "zoobench binary not built: " << zoobench;
  auto run = [&](const std::string& expected) {
    return zoobench::testing::run_command(zoobench + " compare " + dir.file("r_accuracy.csv") +
                                          " --expected " + expected + " 2>&1");
  };
  write_file_atomically(dir.file("r_accuracy.csv"),
                        "dev,name,batch_size,accuracy,graph_breaks\n"
                        "cuda,a,1,pass,1\ncuda,b,1,eager_fail_to_run,0\n");
  write_file_atomically(dir.file("same.csv"),
                        "name,accuracy,graph_breaks,calls_captured,fallbacks_to_eager\n\n\n\n"
                        "a,pass,1,,\n\n\n\nb,eager_fail_to_run,0,0,0\n");
  auto same = run(dir.file("same.csv"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  write_file_atomically(dir.file("fewer.csv"), "name,accuracy,graph_breaks\na,pass,0\n");
  auto more = run(dir.file("fewer.csv"));
  EXPECT_EQ(more.exit_code, 1) << more.output;
  EXPECT_NE(more.output.find("graph_breaks=1, expected=0"), std::string::npos) << more.output;
  write_file_atomically(dir.file("bad.csv"), "name,accuracy,graph_breaks\na,pass,one\n");
  auto bad = run(dir.file("bad.csv"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find(dir.file("bad.csv") + ":2: graph_breaks 'one' is not a whole number"),
            std::string::npos)
      << bad.output;
  write_file_atomically(dir.file("typo.csv"), "name,accuracy\na,pass\nb,eager_fail_to_runn\n");
  auto typo = run(dir.file("typo.csv"));
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_NE(typo.output.find("unknown status 'eager_fail_to_runn'"), std::string::npos)
      << typo.output;
}

}  // namespace
}  // namespace zoobench::report
