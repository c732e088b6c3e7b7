// Result files under faults (issue 20): a row cut off by a killed run, a row glued onto it, an
// unknown status, a failed write (disk full, simulated with RLIMIT_FSIZE), bytes that are not
// UTF-8, JSON nested too deep, a file that is missing or is not a results file. Each ends in a
// repaired file that says so or a clear error, never a part row, a stale temporary file or a
// crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "testing/testing.h"
#include "zoobench/results/csv.h"
#include "zoobench/results/result_files.h"
#include "zoobench/results/sink.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

namespace zoobench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

ResultRow accuracy_row(const std::string& name, Status status = Status::kPass) {
  ResultRow row;
  row.kind = ExperimentKind::kAccuracy;
  row.cells = {{"dev", "cpu"},        {"name", name},       {"batch_size", "4"}, {"backend", "jit"},
               {"mode", "inference"}, {"dtype", "float32"}, {"margin", "0.25"},  {"reason", ""}};
  row.set_status(status);
  row.detail["tensors"] = {{{"path", "output[0]"}, {"margin", 0.25}}};
  return row;
}

std::string one_sink_row_csv(const std::string& path, const std::string& name) {
  ResultSink(ExperimentKind::kAccuracy, path, {{"host", "test"}}).write(accuracy_row(name));
  return read_text_file(path);
}

TEST(CsvRecords, ACutOffRecordIsMarkedWithItsLine) {
  const std::string text = "a,b\n1,\"two\nlines\"\n3,4\n5,\"cut";
  auto records = split_csv_records(text);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_TRUE(records[2].complete);
  EXPECT_EQ(records[2].line, 4u);
  EXPECT_EQ(text.substr(records[2].begin, records[2].end - records[2].begin), "3,4\n");
  EXPECT_FALSE(records[3].complete);
  EXPECT_EQ(records[3].line, 5u);
  EXPECT_EQ(records[3].open_quote_line, 5u);
}

// A run killed mid-row left "...,pas" without its newline: resuming used to count the model
// as done (or glue the next row onto it). The row is moved to .torn and the next starts clean.
TEST(ResultSinkFaults, ACutOffLastRowIsSetAsideAndTheNextRowStartsOnItsOwnLine) {
  testing::ScratchDir dir;
  const std::string path = dir.file("run_accuracy.csv");
  const std::string one_row = one_sink_row_csv(path, "alexnet");
  {
    ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
    sink.write(accuracy_row("resnet18"));
  }
  const std::string full = read_text_file(path);
  const std::string torn_row = full.substr(one_row.size(), full.size() - one_row.size() - 9);
  write_file_atomically(path, one_row + torn_row);

  ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
  ASSERT_EQ(sink.rows().size(), 1u);
  EXPECT_EQ(sink.identities().count(accuracy_row("resnet18").identity()), 0u)
      << "the cut-off row must not count as done";
  EXPECT_EQ(read_text_file(path), one_row);
  EXPECT_EQ(read_text_file(path + ".torn"), torn_row + "\n");
  sink.write(accuracy_row("resnet18"));
  const CsvTable table = read_csv(path);
  ASSERT_EQ(table.rows.size(), 2u);
  for (const auto& row : table.rows) EXPECT_EQ(row.size(), table.header.size());
  EXPECT_EQ(table.get(1, "name"), "resnet18");
  // The JSON twin holds the same records.
  auto from_json = read_result_rows(sink.json_path());
  ASSERT_EQ(from_json.size(), 2u);
  EXPECT_EQ(from_json[1].cells.at("name"), "resnet18");
  EXPECT_EQ(from_json[0].detail["tensors"][0]["path"], "output[0]");
}

// A run killed between a row's CSV line and its JSON twin's rewrite leaves the twin a record
// short. --resume kept it short (with no model left to run nothing rewrote it), and merge then
// read the CSV alone: no row had its detail. The twin is rebuilt from the CSV, keeping the
// detail of the records it had, and the repair is said on stderr.
TEST(ResultSinkFaults, AJsonTwinARecordShortIsRebuiltFromTheCsvAndSaysSo) {
  testing::ScratchDir dir;
  const std::string path = dir.file("run_accuracy.csv");
  std::string one_record_json;
  {
    ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
    sink.write(accuracy_row("alexnet"));
    one_record_json = read_text_file(sink.json_path());
    sink.write(accuracy_row("resnet18"));
  }
  const std::string json_path = dir.file("run_accuracy.json");
  write_file_atomically(json_path, one_record_json);  // killed before the second rewrite

  ::testing::internal::CaptureStderr();
  ResultSink resumed(ExperimentKind::kAccuracy, path, {{"host", "test"}});
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, HasSubstr(json_path));
  EXPECT_THAT(said, HasSubstr("1 record(s) for the CSV's 2 row(s)"));
  EXPECT_THAT(said, HasSubstr("rebuilt from " + path));

  const auto records = read_result_rows(json_path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].cells.at("name"), "resnet18");
  EXPECT_EQ(records[0].detail["tensors"][0]["path"], "output[0]");
  // merge/report read the twin again: the rows keep the detail it has.
  EXPECT_TRUE(load_result_file(path).with_detail);

  // A twin that matches is left alone, silently.
  ::testing::internal::CaptureStderr();
  ResultSink again(ExperimentKind::kAccuracy, path, {{"host", "test"}});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// What the old appender made of a cut-off row: the next row glued onto it (too many fields),
// and a status nobody writes. Neither is trusted; the rows around them are kept.
TEST(ResultSinkFaults, AGluedRowAndAnUnknownStatusAreSetAside) {
  testing::ScratchDir dir;
  const std::string path = dir.file("run_accuracy.csv");
  const std::string header_and_a = one_sink_row_csv(path, "a_model");
  const std::string b = read_text_file(path).substr(header_and_a.find('\n') + 1);
  std::string b_row = b;
  b_row.replace(b_row.find("a_model"), 7, "b_model");
  std::string unknown = b_row;
  unknown.replace(unknown.find("b_model"), 7, "c_model");
  unknown.replace(unknown.find(",pass,"), 6, ",passed,");
  std::string glued = b_row.substr(0, 12) + b_row;  // "cpu,b_model,..." cut, then a whole row
  write_file_atomically(path, header_and_a + glued + unknown + b_row);

  ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
  ASSERT_EQ(sink.rows().size(), 2u);
  EXPECT_EQ(cell(sink.rows()[1], columns::kName), "b_model");
  EXPECT_EQ(read_text_file(path + ".torn"), glued + unknown);
  // The twin was rewritten with the rows the CSV kept.
  EXPECT_EQ(read_result_rows(sink.json_path()).size(), 2u);
}

TEST(ResultSinkFaults, ACutOffHeaderStartsTheFileAgain) {
  testing::ScratchDir dir;
  const std::string path = dir.file("run_accuracy.csv");
  write_file_atomically(path, "dev,name,batch_si");
  ResultSink sink(ExperimentKind::kAccuracy, path, {});
  sink.write(accuracy_row("a_model"));
  EXPECT_EQ(read_csv(path).rows.size(), 1u);
  EXPECT_EQ(read_text_file(path + ".torn"), "dev,name,batch_si\n");
}

// Disk full while appending: the old appender left the part of the row that fitted, and the
// next row was glued onto it.
TEST(ResultSinkFaults, AFailedAppendLeavesNoPartOfTheRow) {
  testing::ScratchDir dir;
  const std::string path = dir.file("table.csv");
  CsvAppender appender(path, {"name", "reason"});
  appender.append({{"name", "a"}, {"reason", "fine"}});
  const std::string before = read_text_file(path);
  try {
    testing::FileSizeLimit limit(before.size() + 10);
    appender.append({{"name", "b"}, {"reason", std::string(100, 'x')}});
    FAIL() << "the write beyond the limit succeeded";
  } catch (const ResultWriteError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr(std::strerror(EFBIG)));
  }
  EXPECT_EQ(read_text_file(path), before);
  appender.append({{"name", "c"}, {"reason", "after"}});
  EXPECT_EQ(read_csv(path).rows.size(), 2u);
}

// Disk full while rewriting the JSON twin: the old writer left its .tmp file, and the CSV had a
// row the twin lacked. Now neither file has the row.
TEST(ResultSinkFaults, AFailedJsonWriteLeavesBothFilesAsTheyWereAndNoTemporaryFile) {
  testing::ScratchDir dir;
  const std::string path = dir.file("run_accuracy.csv");
  ResultSink sink(ExperimentKind::kAccuracy, path, {{"host", "test"}});
  sink.write(accuracy_row("a_model"));
  const std::string csv_before = read_text_file(path);
  const std::string json_before = read_text_file(sink.json_path());
  ASSERT_LT(csv_before.size() * 2, json_before.size()) << "the CSV must fit where the JSON fails";
  try {
    testing::FileSizeLimit limit(json_before.size() + 10);
    sink.write(accuracy_row("b_model"));
    FAIL() << "the write beyond the limit succeeded";
  } catch (const ResultWriteError& e) {
    EXPECT_THAT(e.what(), HasSubstr(sink.json_path()));
    EXPECT_THAT(e.what(), HasSubstr(std::strerror(EFBIG)));
  }
  EXPECT_EQ(read_text_file(path), csv_before);
  EXPECT_EQ(read_text_file(sink.json_path()), json_before);
  EXPECT_THAT(zoobench::testing::temporary_files(dir.path()), ::testing::IsEmpty());
  EXPECT_EQ(sink.rows().size(), 1u);
  EXPECT_EQ(sink.identities().count(accuracy_row("b_model").identity()), 0u);
  sink.write(accuracy_row("b_model"));
  EXPECT_EQ(read_result_rows(sink.json_path()).size(), 2u);
}

// A model folder named in Latin-1 ("caf\xe9"): the JSON writer threw type_error 316 in the
// parent, and again in every later run into the folder.
TEST(ResultSinkFaults, BytesThatAreNotUtf8AreReplacedInBothFilesAndResumeStillFindsTheRow) {
  testing::ScratchDir dir;
  const std::string path = dir.file("run_accuracy.csv");
  const ResultRow latin1 = accuracy_row("caf\xe9");
  {
    ResultSink sink(ExperimentKind::kAccuracy, path, {{"command_line", "--only caf\xe9"}});
    ASSERT_NO_THROW(sink.write(latin1));
  }
  ResultSink again(ExperimentKind::kAccuracy, path, {{"command_line", "--only caf\xe9"}});
  EXPECT_EQ(again.identities().count(latin1.identity()), 1u);
  ASSERT_NO_THROW(again.write(accuracy_row("next")));
  const std::string replaced = "caf\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(read_csv(path).get(0, "name"), replaced);
  auto from_json = read_result_rows(again.json_path());
  ASSERT_EQ(from_json.size(), 2u);
  EXPECT_EQ(from_json[0].cells.at("name"), replaced);
}

std::string nested(int depth) {
  return "{\"records\": [], \"detail\": " + std::string(depth - 1, '[') +
         std::string(depth - 1, ']') + "}";
}

// `zoobench merge` of a file nested 100,000 deep died with SIGSEGV in nlohmann's dump.
TEST(ResultJson, NestingBeyondTheLimitIsRefusedWithTheFileAndTheLimit) {
  EXPECT_NO_THROW(parse_result_json(nested(kMaxResultJsonDepth), "ok.json"));
  try {
    parse_result_json(nested(100000), "deep.json");
    FAIL() << "a 100,000-deep file was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("deep.json"));
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(kMaxResultJsonDepth)));
  }
  EXPECT_THROW(parse_result_json(nested(kMaxResultJsonDepth + 1), "x.json"), std::runtime_error);

  testing::ScratchDir dir;
  const std::string csv = dir.file("run_accuracy.csv");
  one_sink_row_csv(csv, "a_model");
  EXPECT_NO_THROW(check_result_json_depth(csv));
  write_file_atomically(dir.file("run_accuracy.json"), nested(100000));
  EXPECT_THROW(check_result_json_depth(csv), UsageError);
  EXPECT_THROW(read_result_rows(dir.file("run_accuracy.json")), std::runtime_error);
  // --resume rebuilds such a twin from the CSV instead of reading it.
  ResultSink sink(ExperimentKind::kAccuracy, csv, {});
  EXPECT_EQ(sink.rows().size(), 1u);
}

TEST(ResultFiles, MissingAndForeignFilesAreUsageErrors) {
  testing::ScratchDir dir;
  EXPECT_THROW(load_result_file(dir.file("absent.csv")), UsageError);
  write_file_atomically(dir.file("other.csv"), "a,b\n1,2\n");
  EXPECT_THROW(load_result_file(dir.file("other.csv")), UsageError);
  // A folder expands to its results CSVs only (not their JSON twins, not other CSVs).
  one_sink_row_csv(dir.file("r_accuracy.csv"), "m");
  EXPECT_EQ(expand_result_paths({dir.path()}),
            std::vector<std::string>{dir.file("r_accuracy.csv")});
}

}  // namespace
}  // namespace zoobench
