// Result rows survive the CSV and JSON round trips; appending keeps finished rows; a file of an
// older zoobench (fewer trailing columns) is widened, any other header mismatch is refused
// rather than mixing two experiments in one file.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "testing/testing.h"
#include "zoobench/results/csv.h"
#include "zoobench/results/sink.h"
#include "zoobench/util/files.h"

namespace zoobench {
namespace {

ResultRow accuracy_row(const std::string& name, Status status, const std::string& reason) {
  ResultRow row;
  row.kind = ExperimentKind::kAccuracy;
  row.cells = {{"dev", "cpu"}, {"name", name}, {"batch_size", "4"}, {"backend", "jit"},
               {"mode", "inference"}, {"dtype", "float32"}, {"margin", "0.25"}, {"reason", reason}};
  row.set_status(status);
  row.detail["tensors"] = {{{"path", "output[0]"}, {"margin", 0.25}}};
  return row;
}

// The rows the runner repeats alone when they ran beside other checks: an out-of-memory status,
// or a capture that ran out of memory and fell back (the row would pass without its CUDA graph);
// not a capture that fell back for another reason, nor a pass or an accuracy failure.
TEST(ResultRows, RanOutOfMemoryByItsStatusOrItsCapture) {
  auto row_of = [](Status status, const std::string& cudagraphs, const std::string& reason) {
    ResultRow row = accuracy_row("m", status, reason);
    set_cell(row, columns::kCudagraphs, cudagraphs);
    return row;
  };
  const std::string capture_oom =
      "CUDA graph capture failed, ran uncaptured: RuntimeError: CUDA out of memory. Tried to allocate 384.00 MiB.";
  const std::string host_read = "CUDA graph capture skipped, ran uncaptured: the model waits for the device";
  EXPECT_TRUE(ran_out_of_memory(row_of(Status::kPass, "fallback", capture_oom)));
  EXPECT_TRUE(ran_out_of_memory(row_of(Status::kEager1stRunOOM, "", "")));
  EXPECT_TRUE(ran_out_of_memory(row_of(Status::kOOM, "on", "")));
  EXPECT_FALSE(ran_out_of_memory(row_of(Status::kPass, "fallback", host_read)));
  EXPECT_FALSE(ran_out_of_memory(row_of(Status::kPass, "on", "")));
  EXPECT_FALSE(ran_out_of_memory(row_of(Status::kFailAccuracy, "on", "")));
  const std::string build_oom =
      "export failed: building the model: AcceleratorError: CUDA error: out of memory";
  EXPECT_TRUE(ran_out_of_memory(row_of(Status::kModelFailToLoad, "off", build_oom)));
  EXPECT_FALSE(ran_out_of_memory(
      row_of(Status::kModelFailToLoad, "off", "export failed: No module named 'gym'")));
}

TEST(Csv, QuotesRoundTrip) {
  std::vector<std::string> cells = {"plain", "with,comma", "with \"quote\"", "multi\nline", ""};
  CsvTable table = parse_csv("a,b,c,d,e\n" + csv_line(cells));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0], cells);
  EXPECT_EQ(table.get(0, "c"), "with \"quote\"");
  EXPECT_EQ(table.get(0, "missing"), "");
}

TEST(Csv, UnterminatedQuoteNamesTheLine) {
  try {
    parse_csv("a,b\n1,2\n3,\"oops\n", "f.csv");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("f.csv:3"), std::string::npos) << e.what();
  }
}

TEST(Csv, ReadsUpstreamFileWithFewerColumns) {
  CsvTable table = parse_csv("dev,name,batch_size,accuracy\ncuda,resnet18,16,pass\r\n");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.get(0, "accuracy"), "pass");
}

// A spreadsheet's "CSV UTF-8" export starts with a byte-order mark: `dev` is still `dev`.
TEST(Csv, ByteOrderMarkIsNotPartOfTheFirstColumn) {
  CsvTable table = parse_csv("\xEF\xBB\xBF" "dev,name,accuracy\ncuda,resnet18,pass\n");
  EXPECT_EQ(table.header.front(), "dev");
  EXPECT_EQ(table.get(0, "dev"), "cuda");
}

TEST(ResultSink, AppendsKeepsRowsAndRewritesJson) {
  testing::ScratchDir dir;
  std::string path = dir.file("out/run_accuracy.csv");
  {
    ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
    sink.write(accuracy_row("resnet18", Status::kPass, ""));
  }
  {
    // A second process (resume) sees the first row and adds another.
    ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
    ASSERT_EQ(sink.rows().size(), 1u);
    EXPECT_EQ(sink.identities().count(accuracy_row("resnet18", Status::kPass, "").identity()), 1u);
    sink.write(accuracy_row("alexnet", Status::kFailAccuracy, "worst output[0], margin 3.1"));
  }
  auto rows = read_result_rows(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].status(), Status::kFailAccuracy);
  EXPECT_EQ(rows[1].cells.at("reason"), "worst output[0], margin 3.1");
  auto from_json = read_result_rows(dir.file("out/run_accuracy.json"));
  ASSERT_EQ(from_json.size(), 2u);
  EXPECT_EQ(from_json[0].cells.at("margin"), "0.25");
  EXPECT_EQ(from_json[0].detail["tensors"][0]["path"], "output[0]");
  EXPECT_EQ(from_json[1].cells, rows[1].cells);
}

// The accuracy columns of an older zoobench, before the last `added` existed.
std::vector<std::string> older_columns(std::size_t added) {
  const auto& all = result_columns(ExperimentKind::kAccuracy);
  return {all.begin(), all.end() - static_cast<std::ptrdiff_t>(added)};
}

// One record under that header, its cells by column name, ended by `line_end`.
std::string older_record(const std::vector<std::string>& header,
                         const std::map<std::string, std::string>& cells,
                         const std::string& line_end) {
  std::vector<std::string> record;
  for (const auto& column : header) record.push_back(cells.count(column) ? cells.at(column) : "");
  const std::string line = csv_line(record);
  return line.substr(0, line.size() - 1) + line_end;
}

TEST(ResultSink, WidensAFileOfAnOlderZoobenchAndResumesIt) {
  testing::ScratchDir dir;
  const std::string path = dir.file("old_accuracy.csv");
  // Two columns short; a reason with a comma and a line break, a CRLF row, and a last row cut
  // off by a killed run (no newline: it must go to .torn, not be widened).
  const auto header = older_columns(2);
  write_file_atomically(
      path, csv_line(header) +
                older_record(header, {{"dev", "cuda"}, {"name", "bert"}, {"accuracy", "pass"},
                                      {"reason", "first line, and\nsecond"}}, "\n") +
                older_record(header, {{"dev", "cuda"}, {"name", "gpt2"},
                                      {"accuracy", "fail_accuracy"}}, "\r\n") +
                "cuda,t5,8,pa");

  ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
  ASSERT_EQ(sink.rows().size(), 2u);
  sink.write(accuracy_row("albert", Status::kPass, ""));

  const CsvTable table = read_csv(path);
  EXPECT_EQ(table.header, result_columns(ExperimentKind::kAccuracy));
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.get(0, "reason"), "first line, and\nsecond");
  EXPECT_EQ(table.get(1, "name"), "gpt2");
  EXPECT_EQ(table.get(1, "accuracy"), "fail_accuracy");
  for (std::size_t row = 0; row < 2; ++row) {
    EXPECT_EQ(table.rows[row].size(), table.header.size());
    EXPECT_EQ(table.get(row, table.header.back()), "");
  }
  EXPECT_EQ(table.get(2, "name"), "albert");
  EXPECT_EQ(read_text_file(path + ".torn"), "cuda,t5,8,pa\n");
  EXPECT_EQ(read_result_rows(dir.file("old_accuracy.json")).size(), 3u);
}

TEST(ResultSink, RefusesAFileOfAnotherExperiment) {
  testing::ScratchDir dir;
  std::string path = dir.file("mixed.csv");
  write_file_atomically(path, "dev,name,batch_size,speedup\ncpu,x,1,1.5\n");
  EXPECT_THROW(ResultSink(ExperimentKind::kAccuracy, path, {}), std::runtime_error);
}

TEST(Status, NamesRoundTrip) {
  for (Status s : {Status::kPass, Status::kEager1stRunOOM, Status::kCrash, Status::kTimeout}) {
    EXPECT_EQ(parse_status(status_name(s)), s);
  }
  EXPECT_EQ(status_name(Status::kEager2ndRunOOM), "eager_2nd_run_OOM");
  EXPECT_FALSE(parse_status("passed").has_value());
}

}  // namespace
}  // namespace zoobench
