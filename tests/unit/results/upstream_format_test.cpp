// --output-format upstream: the column lists against upstream's own, read from the TorchBench
// checkout's benchmarks/dynamo/common.py (../shared/torchbench), and the cells of a row.
#include "zoobench/results/upstream_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

std::string common_py() {
  const auto path = std::filesystem::path(zoobench::testing::repo_root()) / ".." / "shared" /
                    "torchbench" / "userbenchmark" / "dynamo" / "dynamobench" / "common.py";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The body of `def NAME(` up to the next top-level or method definition at its indentation.
std::string function_body(const std::string& source, const std::string& name) {
  const std::regex start("\\n( *)def " + name + "\\(");
  std::smatch match;
  if (!std::regex_search(source, match, start)) return {};
  const std::size_t from = match.position(0) + match.length(0);
  const std::string next = "\n" + match[1].str() + "def ";
  const std::size_t to = source.find(next, from);
  return source.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

// The quoted names of the first `LEFT = [ ... ]` (LEFT a regex) in `body`.
std::vector<std::string> list_after(const std::string& body, const std::string& left) {
  std::smatch match;
  if (!std::regex_search(body, match, std::regex(left + "\\s*\\[([^\\]]*)\\]"))) return {};
  std::vector<std::string> names;
  const std::string items = match[1].str();
  const std::regex quoted("\"(\\w+)\"");
  for (auto it = std::sregex_iterator(items.begin(), items.end(), quoted);
       it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1].str());
  return names;
}

std::vector<std::string> dict_keys(const std::string& body) {
  std::vector<std::string> keys;
  const std::regex key("\\n\\s*\"(\\w+)\":");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), key); it != std::sregex_iterator();
       ++it)
    keys.push_back((*it)[1].str());
  return keys;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

TEST(UpstreamFormat, ColumnsAreThoseOfTheCheckoutsCommonPy) {
  const std::string source = common_py();
  if (source.empty()) GTEST_SKIP() << "no TorchBench checkout at ../shared/torchbench";
  const auto counters = dict_keys(function_body(source, "get_dynamo_stats"));
  ASSERT_FALSE(counters.empty()) << "get_dynamo_stats not found in common.py";
  EXPECT_EQ(upstream_dynamo_counters(), counters);

  // _write_accuracy_row: the four first, dynamo's counters, then compilation_latency.
  const std::string accuracy_body = function_body(source, "_write_accuracy_row");
  std::vector<std::string> accuracy = list_after(accuracy_body, "headers =");
  ASSERT_EQ(accuracy.size(), 4u) << accuracy_body.substr(0, 400);
  append(accuracy, counters);
  ASSERT_NE(accuracy_body.find("headers.append(\"compilation_latency\")"), std::string::npos);
  accuracy.push_back("compilation_latency");
  EXPECT_EQ(upstream_columns(ExperimentKind::kAccuracy), accuracy);

  // speedup_experiment: first_headers + [speedup, abs_latency] + the compile/memory group
  // (always passed by run_performance_test) + dynamo's counters.
  const std::string speedup_body = function_body(source, "speedup_experiment");
  std::vector<std::string> performance = list_after(speedup_body, "first_headers =");
  append(performance, list_after(speedup_body, "headers = first_headers \\+"));
  append(performance, list_after(speedup_body, "headers \\+="));
  ASSERT_EQ(performance.size(), 9u) << "speedup_experiment's headers changed shape";
  append(performance, counters);
  EXPECT_EQ(upstream_columns(ExperimentKind::kPerformance), performance);
}

ResultRow row_of(ExperimentKind kind, std::map<std::string, std::string> cells) {
  ResultRow row;
  row.kind = kind;
  row.cells = {{"dev", "cuda"},      {"name", "alexnet"}, {"batch_size", "128"},
               {"backend", "inductor:reduce-overhead"}, {"suite", "torchbench"},
               {"mode", "inference"}, {"dtype", "float32"}};
  for (auto& [k, v] : cells) row.cells[k] = v;
  return row;
}

TEST(UpstreamFormat, RowsBecomeUpstreamsCellsWithTheSpeedupAgainstPythonEager) {
  ResultRow perf = row_of(ExperimentKind::kPerformance,
                          {{"status", "pass"}, {"speedup", "1.38"}, {"python_speedup", "2.5"},
                           {"abs_latency", "1.5"}, {"compilation_latency", "20"},
                           {"compression_ratio", "0.9"}, {"eager_peak_mem", "1.25"},
                           {"dynamo_peak_mem", "1.5"}});
  perf.detail["dynamo_stats"] = {{"unique_graphs", 1}, {"graph_breaks", 2}};
  EXPECT_EQ(upstream_file_name(perf),
            "inductor-reduce-overhead_torchbench_float32_inference_cuda_performance.csv");
  const auto cells = upstream_record(perf);
  ASSERT_EQ(cells.size(), upstream_columns(ExperimentKind::kPerformance).size());
  EXPECT_EQ(cells[2], "128");
  EXPECT_EQ(cells[3], "2.500000");  // python_speedup, not zoobench's speedup
  EXPECT_EQ(cells[4], "1.500000");
  EXPECT_EQ(cells[10], "1");  // unique_graphs
  EXPECT_EQ(cells[11], "0");  // fallbacks_to_eager: not counted, 0 as upstream's Counter
  EXPECT_EQ(cells[12], "2");

  // A model that did not run: upstream's placeholder row.
  const auto failed =
      upstream_record(row_of(ExperimentKind::kPerformance, {{"status", "fail_to_run"}}));
  std::vector<std::string> placeholder = {"cuda", "alexnet", "0", "0.000000", "0.000000"};
  placeholder.resize(upstream_columns(ExperimentKind::kPerformance).size(), "0");
  EXPECT_EQ(failed, placeholder);

  ResultRow accuracy = row_of(ExperimentKind::kAccuracy, {{"accuracy", "fail_accuracy"}});
  accuracy.detail["compile_s"] = 12.5;
  const auto acc = upstream_record(accuracy);
  ASSERT_EQ(acc.size(), upstream_columns(ExperimentKind::kAccuracy).size());
  EXPECT_EQ(acc[3], "fail_accuracy");
  EXPECT_EQ(acc.back(), "12.500000");
}

// Where nothing was measured (a backend outside the torch.compile family, a row that failed
// before dynamo compiled), dynamo's counters and the compile time are empty cells, not upstream's
// padding 0, which reads as "captured, no graph breaks"; where dynamo ran, a counter it never
// counted is 0, as upstream's Counter. upstream's placeholder performance row stays as it is.
TEST(UpstreamFormat, CountersAreEmptyWhereNothingWasMeasured) {
  const auto& columns = upstream_columns(ExperimentKind::kAccuracy);
  const auto at = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) -
                                    columns.begin());
  };
  for (const char* status : {"pass", "eager_1st_run_fail", "fail_to_run"}) {
    const auto cells = upstream_record(row_of(ExperimentKind::kAccuracy, {{"accuracy", status}}));
    ASSERT_EQ(cells.size(), columns.size());
    EXPECT_EQ(cells[at("accuracy")], status);
    for (const auto& counter : upstream_dynamo_counters())
      EXPECT_EQ(cells[at(counter)], "") << counter << " of a " << status << " row";
    EXPECT_EQ(cells[at("compilation_latency")], "");
  }
  ResultRow compiled = row_of(ExperimentKind::kAccuracy, {{"accuracy", "pass"}});
  compiled.detail["dynamo_stats"] = {{"calls_captured", 12}, {"unique_graphs", 1}};
  compiled.detail["compile_s"] = 3.0;
  const auto cells = upstream_record(compiled);
  EXPECT_EQ(cells[at("calls_captured")], "12");
  EXPECT_EQ(cells[at("unique_graphs")], "1");
  EXPECT_EQ(cells[at("graph_breaks")], "0");
  EXPECT_EQ(cells[at("compilation_latency")], "3.000000");

  // A timed row of a backend without dynamo: its numbers, empty counters.
  const auto timed =
      upstream_record(row_of(ExperimentKind::kPerformance,
                             {{"status", "pass"}, {"python_speedup", "2"}, {"abs_latency", "1"}}));
  EXPECT_EQ(timed[3], "2.000000");
  for (std::size_t i = 9; i < timed.size(); ++i) EXPECT_EQ(timed[i], "") << i;
}

}  // namespace
}  // namespace zoobench
