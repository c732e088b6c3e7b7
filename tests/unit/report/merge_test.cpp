// Merging partitions: every row and column kept, JSON detail kept, stable order; overlapping
// partitions that disagree and mixed experiment kinds refused with a clear message.
#include "zoobench/report/merge.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report_rows.h"
#include "testing/testing.h"
#include "zoobench/results/csv.h"
#include "zoobench/results/result_files.h"
#include "zoobench/results/sink.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

namespace zoobench::report {
namespace {

using testing::accuracy_row;
using testing::performance_row;

ResultRow with_detail(ResultRow row, const std::string& tensor) {
  row.detail["tensors"] = {{{"path", tensor}, {"margin", 0.5}}};
  return row;
}

void write_partition(const std::string& path, const std::vector<ResultRow>& rows) {
  ResultSink sink(rows.front().kind, path, {{"host", path}});
  for (const auto& row : rows) sink.write(row);
}

TEST(Merge, PartitionsCombineLosslesslyAndSorted) {
  zoobench::testing::ScratchDir dir;
  write_partition(
      dir.file("p1_accuracy.csv"),
      {with_detail(accuracy_row("cuda:1", "vgg", "pass", {{"margin", "0.5"}}), "output[0]"),
       with_detail(accuracy_row("cuda:0", "alexnet", "fail_accuracy", {{"reason", "x, \"y\""}}),
                   "output[1]")});
  write_partition(dir.file("p2_accuracy.csv"),
                  {with_detail(accuracy_row("cuda:0", "vgg", "pass"), "output[2]"),
                   with_detail(accuracy_row("cuda:0", "bert", "OOM"), "output[3]")});
  std::vector<ResultFile> inputs = {load_result_file(dir.file("p1_accuracy.csv")),
                                    load_result_file(dir.file("p2_accuracy.csv"))};
  EXPECT_TRUE(inputs[0].with_detail);  // the JSON twin was found
  MergedResults merged = merge_results(inputs);
  write_merged_results(merged, dir.file("out/all_accuracy.csv"));

  // Read back: the CSV alone, then the JSON twin.
  CsvTable table = read_csv(dir.file("out/all_accuracy.csv"));
  EXPECT_EQ(table.header, result_columns(ExperimentKind::kAccuracy));
  ASSERT_EQ(table.rows.size(), 4u);
  std::vector<std::string> order;
  for (std::size_t i = 0; i < table.rows.size(); ++i)
    order.push_back(table.get(i, "name") + "@" + table.get(i, "dev"));
  EXPECT_EQ(order, (std::vector<std::string>{"alexnet@cuda:0", "bert@cuda:0", "vgg@cuda:0",
                                             "vgg@cuda:1"}));
  EXPECT_EQ(table.get(0, "reason"), "x, \"y\"");
  EXPECT_EQ(table.get(3, "margin"), "0.5");

  ResultFile back = load_result_file(dir.file("out/all_accuracy.json"));
  ASSERT_EQ(back.rows.size(), 4u);
  EXPECT_EQ(back.rows[0].detail["tensors"][0]["path"], "output[1]");
  EXPECT_EQ(back.rows[3].detail["tensors"][0]["path"], "output[0]");
  EXPECT_EQ(back.context["merged_from"].size(), 2u);
  // Every input row comes back with the same cells.
  for (const auto& input : inputs) {
    for (const auto& row : input.rows) {
      bool found = false;
      for (const auto& out : back.rows)
        found = found || (out.identity() == row.identity() && out.cells == row.cells);
      EXPECT_TRUE(found) << row.identity();
    }
  }
}

TEST(Merge, KeepsForeignColumnsAfterOurs) {
  zoobench::testing::ScratchDir dir;
  write_file_atomically(
      dir.file("a.csv"),
      "dev,name,batch_size,accuracy,margin,npu_graph_count\ncuda,m1,8,pass,0.123456789,2\n");
  write_file_atomically(dir.file("b.csv"),
                        "dev,name,batch_size,accuracy\ncuda,m0,8,fail_accuracy\n");
  MergedResults merged =
      merge_results({load_result_file(dir.file("a.csv")), load_result_file(dir.file("b.csv"))});
  write_merged_results(merged, dir.file("m.json"));  // naming the JSON writes the CSV beside it
  CsvTable table = read_csv(dir.file("m.csv"));
  EXPECT_EQ(table.header.back(), "npu_graph_count");
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.get(0, "name"), "m0");
  EXPECT_EQ(table.get(1, "npu_graph_count"), "2");
  EXPECT_EQ(table.get(1, "margin"), "0.123456789");  // digits kept as written
}

TEST(Merge, IdenticalDuplicateKeptOnceConflictingOneRefused) {
  zoobench::testing::ScratchDir dir;
  write_partition(dir.file("p1_accuracy.csv"), {accuracy_row("cpu", "m", "pass")});
  write_partition(dir.file("p2_accuracy.csv"),
                  {accuracy_row("cpu", "m", "pass"), accuracy_row("cpu", "n", "pass")});
  write_partition(dir.file("p3_accuracy.csv"), {accuracy_row("cpu", "m", "fail_accuracy")});
  MergedResults merged = merge_results({load_result_file(dir.file("p1_accuracy.csv")),
                                        load_result_file(dir.file("p2_accuracy.csv"))});
  EXPECT_EQ(merged.rows.size(), 2u);
  try {
    merge_results({load_result_file(dir.file("p1_accuracy.csv")),
                   load_result_file(dir.file("p3_accuracy.csv"))});
    FAIL() << "a conflicting duplicate was merged";
  } catch (const UsageError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("p1_accuracy.csv"), std::string::npos) << message;
    EXPECT_NE(message.find("p3_accuracy.csv"), std::string::npos) << message;
    EXPECT_NE(message.find(" m "), std::string::npos) << message;
  }
}

TEST(Merge, RefusesToMixAccuracyAndPerformance) {
  zoobench::testing::ScratchDir dir;
  write_partition(dir.file("a_accuracy.csv"), {accuracy_row("cpu", "m", "pass")});
  write_partition(dir.file("a_performance.csv"), {performance_row("cpu", "m", "jit", 2, 1)});
  try {
    merge_results({load_result_file(dir.file("a_accuracy.csv")),
                   load_result_file(dir.file("a_performance.csv"))});
    FAIL() << "mixed kinds were merged";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("separately"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zoobench::report
