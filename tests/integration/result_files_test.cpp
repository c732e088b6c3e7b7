// End-to-end faults in the result files (issue 20), through the real binary: a row cut off by a
// killed run and --resume, a disk that fills during a run, a model folder whose name is not
// UTF-8, an expected file that cannot gate, a results JSON nested too deep. Each ends in a clear
// message or a repaired file that says so, never an abort, a part row or a stale .tmp file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration_helpers.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;

struct SmallRun {
  zt::ScratchDir dir;
  std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");

  explicit SmallRun(const Models& models) { make_zoo(zoo, suites, "good", models); }

  // `zoobench run --accuracy` over the suite, with `extra` flags, behind `prefix` (a shell
  // command that execs what follows, e.g. one that limits file sizes).
  zt::CommandResult accuracy(const std::string& extra, const std::string& prefix = "") const {
    return zt::run_command(prefix +
                           zoobench_command("run --suite good --accuracy --suites-dir " +
                                            quote(suites) + " --zoo " + quote(zoo) +
                                            " --output-directory " + quote(out) + " " + extra) +
                           " 2>&1");
  }
  std::string csv() const { return accuracy_csv(out, "good"); }
  std::string json() const { return fs::path(csv()).replace_extension(".json").string(); }
};

std::vector<std::string> json_names(const std::string& path) {
  std::vector<std::string> names;
  const nlohmann::json parsed = nlohmann::json::parse(read_text(path));
  for (const auto& record : parsed.at("records"))
    names.push_back(record.at("cells").at("name").get<std::string>());
  return names;
}

// Every line of the CSV has as many fields as its header (no cell here holds a comma).
void expect_whole_lines(const std::string& path) {
  const std::string text = read_text(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << path;
  std::istringstream lines(text);
  std::string line, header;
  std::getline(lines, header);
  const auto fields = [](const std::string& l) { return std::count(l.begin(), l.end(), ','); };
  while (std::getline(lines, line)) EXPECT_EQ(fields(line), fields(header)) << line;
}

// A run killed while appending left half of b_mlp's row: --resume counted b_mlp as done, or
// glued the next row onto the half one.
TEST(ResultFiles, ResumeSetsAsideACutOffRowAndRunsItsModelAgain) {
  SmallRun run({{"a_mlp", "mlp"}, {"b_mlp", "mlp"}});
  auto first = run.accuracy("");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string text = read_text(run.csv());
  const std::string cut = text.substr(0, text.size() - 20);
  write_text(run.csv(), cut);

  auto resumed = run.accuracy("--resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr(run.csv() + ":3: the row was cut off"));
  EXPECT_THAT(resumed.output, HasSubstr("b_mlp has no row here now and runs again"));
  EXPECT_THAT(resumed.output, HasSubstr("resume: a_mlp already has its rows"));
  EXPECT_EQ(read_text(run.csv() + ".torn"), cut.substr(cut.rfind('\n') + 1) + "\n");
  const auto rows = read_csv(run.csv());
  EXPECT_EQ(count_names(rows), (std::map<std::string, int>{{"a_mlp", 1}, {"b_mlp", 1}}));
  for (const auto& row : rows) EXPECT_EQ(row.at("accuracy"), "pass") << row.at("reason");
  expect_whole_lines(run.csv());
  EXPECT_EQ(json_names(run.json()), (std::vector<std::string>{"a_mlp", "b_mlp"}));
}

// The disk fills while the run writes b_mlp's rows (simulated by a file size limit, so no root
// is needed): the parent used to abort (SIGABRT) from the worker thread, leaving a part row and
// a stale .tmp file.
TEST(ResultFiles, ADiskThatFillsDuringARunEndsItInOrder) {
  SmallRun run({{"a_mlp", "mlp"}, {"b_mlp", "mlp"}, {"c_mlp", "mlp"}});
  auto first = run.accuracy("--only a_mlp");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string csv_before = read_text(run.csv()), json_before = read_text(run.json());
  // Room for the CSV's next row, not for the JSON twin with one record more. SIGXFSZ ignored:
  // a full disk fails the write (ENOSPC) without a signal.
  const std::string limit =
      "trap '' XFSZ; exec prlimit --fsize=" + std::to_string(json_before.size() + 50) + ": ";
  auto full = run.accuracy("--resume", limit);
  EXPECT_EQ(full.exit_code, 1) << full.output;
  EXPECT_THAT(full.output, HasSubstr("cannot write " + run.json() + ": File too large"));
  EXPECT_THAT(full.output, HasSubstr("run again with --resume"));
  EXPECT_THAT(zoobench::testing::temporary_files(run.out), ::testing::IsEmpty());
  EXPECT_EQ(read_text(run.csv()), csv_before);
  EXPECT_EQ(read_text(run.json()), json_before);

  auto after = run.accuracy("--resume");
  ASSERT_EQ(after.exit_code, 0) << after.output;
  EXPECT_EQ(count_names(read_csv(run.csv())),
            (std::map<std::string, int>{{"a_mlp", 1}, {"b_mlp", 1}, {"c_mlp", 1}}));
  expect_whole_lines(run.csv());
  EXPECT_EQ(json_names(run.json()).size(), 3u);
}

// A model folder named in Latin-1: the parent aborted in the JSON writer (type_error 316), and
// so did every later run into the same output folder.
TEST(ResultFiles, AModelFolderWhoseNameIsNotUtf8IsWrittenWithTheBytesReplaced) {
  SmallRun run({{"a_mlp", "mlp"}, {"b_mlp", "mlp"}});
  fs::rename(run.zoo + "/good/b_mlp", run.zoo + "/good/caf\xe9");
  auto first = run.accuracy("");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string replaced = "caf\xef\xbf\xbd";
  EXPECT_EQ(count_names(read_csv(run.csv())),
            (std::map<std::string, int>{{"a_mlp", 1}, {replaced, 1}}));
  EXPECT_EQ(json_names(run.json()), (std::vector<std::string>{"a_mlp", replaced}));

  auto again = run.accuracy("--resume");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("resume: caf\xe9 already has its rows"));
  EXPECT_EQ(read_csv(run.csv()).size(), 2u);
}

// An expected file with a misspelt status, or with only a header, made every model IMPROVED
// and the gate passed.
TEST(ResultFiles, CompareRefusesAnExpectedFileThatCannotGate) {
  zt::ScratchDir dir;
  const std::string results = dir.file("run_accuracy.csv"), expected = dir.file("expected.csv");
  write_text(results,
             "dev,name,batch_size,accuracy\ncpu,a_mlp,4,pass\ncpu,b_mlp,4,fail_accuracy\n");
  const std::string compare =
      zoobench_command("compare " + quote(results) + " --expected " + quote(expected)) + " 2>&1";

  write_text(expected, "name,accuracy\na_mlp,pass\nb_mlp,passed\n");
  auto misspelt = zt::run_command(compare);
  EXPECT_EQ(misspelt.exit_code, 2) << misspelt.output;
  EXPECT_THAT(misspelt.output, HasSubstr(expected + ":3: unknown status 'passed'"));
  EXPECT_THAT(misspelt.output, HasSubstr("pass_due_to_skip, fail_accuracy"));

  write_text(expected, "name,accuracy\n");
  auto header_only = zt::run_command(compare);
  EXPECT_EQ(header_only.exit_code, 2) << header_only.output;
  EXPECT_THAT(header_only.output, HasSubstr("names none of the 2 models in the results"));

  write_text(expected, "name,accuracy\nresnet50,pass\n");
  EXPECT_EQ(zt::run_command(compare).exit_code, 2);

  write_text(expected, "name,accuracy\na_mlp,pass\nb_mlp,fail_accuracy\n");
  auto good = zt::run_command(compare);
  EXPECT_EQ(good.exit_code, 0) << good.output;
}

// `compare X --expected X --update-expected` replaced a results file by `name,accuracy`.
TEST(ResultFiles, UpdateExpectedNeverOverwritesTheResultsItReads) {
  zt::ScratchDir dir;
  const std::string results = dir.file("run_accuracy.csv");
  const std::string rows = "dev,name,batch_size,accuracy\ncpu,a_mlp,4,pass\n";
  write_text(results, rows);
  auto same = zt::run_command(zoobench_command("compare " + quote(results) + " --expected " +
                                               quote(results) + " --update-expected") + " 2>&1");
  EXPECT_EQ(same.exit_code, 2) << same.output;
  EXPECT_THAT(same.output, HasSubstr("one of the inputs"));
  EXPECT_EQ(read_text(results), rows);
}

// `report R.csv --markdown R.csv` (or --html, or the JSON twin) and `compare R --upstream U
// --markdown R|U` replaced the results with the report; merge's -o likewise. Each output that is
// an input is refused before anything is written, whatever its spelling (a hard link, ./).
TEST(ResultFiles, NoOutputIsWrittenOverAnInput) {
  zt::ScratchDir dir;
  const std::string results = dir.file("run_accuracy.csv"), twin = dir.file("run_accuracy.json");
  const std::string upstream = dir.file("inductor_accuracy.csv"), linked = dir.file("link.csv");
  const std::string rows = "dev,name,batch_size,accuracy\ncpu,a_mlp,4,pass\n";
  write_text(results, rows);
  write_text(twin, "not read: the report reads the CSV's twin only when it is a result file");
  write_text(upstream, rows);
  std::filesystem::create_hard_link(results, linked);
  const std::vector<std::string> commands = {
      "report " + quote(results) + " --markdown " + quote(results),
      "report " + quote(results) + " --html " + quote(linked),
      "report " + quote(results) + " --markdown " + quote(twin),
      "report " + quote(dir.path()) + " --markdown " + quote(upstream),
      "compare " + quote(results) + " --upstream " + quote(upstream) + " --markdown " +
          quote(upstream),
      "merge " + quote(results) + " -o " + quote(dir.path() + "/./run_accuracy.json"),
  };
  for (const auto& command : commands) {
    auto refused = zt::run_command(zoobench_command(command) + " 2>&1");
    EXPECT_EQ(refused.exit_code, 2) << command << "\n" << refused.output;
    EXPECT_THAT(refused.output, HasSubstr("would destroy what this command reads")) << command;
  }
  EXPECT_EQ(read_text(results), rows);
  EXPECT_EQ(read_text(upstream), rows);
  EXPECT_THAT(read_text(twin), HasSubstr("not read"));
  // A new file beside the inputs is written.
  auto fresh = zt::run_command(
      zoobench_command("report " + quote(results) + " --markdown " + quote(dir.file("r.md"))));
  EXPECT_EQ(fresh.exit_code, 0) << fresh.output;
}

// index.json and manifests are files anyone may have written: `zoobench list` printed their
// terminal escapes raw (a title change, a cursor move).
TEST(ResultFiles, ListShowsNoTerminalEscapesFromTheZoo) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo");
  write_text(zoo + "/demo/a_mlp/manifest.json", "{\"format\": \"\\u001b[31mred\"}");
  write_text(zoo + "/index.json",
             "{\"format\": \"zoobench-index/1\", \"models\": [{\"suite\": \"demo\", \"name\": "
             "\"b_mlp\", \"status\": \"failed\", \"reason\": \"\\u001b]0;pwned\\u0007 no weights\"}]}");
  auto list = zt::run_command(zoobench_command("list --zoo " + quote(zoo)) + " 2>&1");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(list.output.find('\x1b'), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find('\a'), std::string::npos) << list.output;
  EXPECT_THAT(list.output, HasSubstr("?]0;pwned? no weights"));
}

// `zoobench merge` of a JSON nested 100,000 deep died with SIGSEGV.
TEST(ResultFiles, MergeRefusesAJsonNestedTooDeep) {
  zt::ScratchDir dir;
  const std::string deep = dir.file("deep_accuracy.json");
  write_text(deep,
             "{\"format\": \"zoobench-results/1\", \"records\": [{\"kind\": \"accuracy\", "
             "\"cells\": {\"name\": \"x\", \"accuracy\": \"pass\"}, \"detail\": " +
                 std::string(100000, '[') + std::string(100000, ']') + "}]}");
  auto merged = zt::run_command(
      zoobench_command("merge " + quote(deep) + " -o " + quote(dir.file("merged.csv"))) + " 2>&1");
  EXPECT_EQ(merged.exit_code, 2) << merged.output;
  EXPECT_THAT(merged.output, HasSubstr(deep + " is nested deeper than 64 levels"));
  EXPECT_FALSE(fs::exists(dir.file("merged.json")));
}

// merge, report and compare read rows as --resume does: a ragged row, a glued one, a shifted
// one (another column's value where the status goes) and an unknown status are refused with the
// file and line (they were used as they were: a ragged row's cells landed in other columns).
TEST(ResultFiles, MergeReportAndCompareRefuseRowsThatCannotBeTrusted) {
  zt::ScratchDir dir;
  const std::string header = "dev,name,batch_size,accuracy\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cpu,alexnet,4\n", ":3: the row has 3 fields where the header has 4"},
      {"cpu,alexnet,4,pass,cpu,vgg,4,pass\n", ":3: the row has 8 fields where the header has 4"},
      {"cpu,4,alexnet,pass\n", ":3: batch_size 'alexnet' is not a whole number"},
      {"cpu,alexnet,4,4\n", ":3: unknown status '4'"},
      {"cpu,alexnet,4,passed\n", ":3: unknown status 'passed'"},
  };
  for (const auto& [row, said] : cases) {
    SCOPED_TRACE(row);
    const std::string csv = dir.file("bad_accuracy.csv");
    write_text(csv, header + "cpu,resnet18,4,pass\n" + row);
    write_text(dir.file("expected.csv"), "name,accuracy\nresnet18,pass\n");
    std::vector<std::string> commands = {"merge " + quote(csv) + " -o " +
                                         quote(dir.file("merged.csv"))};
    if (&row == &cases.front().first) {  // report and compare read files as merge does
      commands.push_back("report " + quote(csv) + " --markdown " + quote(dir.file("report.md")));
      commands.push_back("compare " + quote(csv) + " --expected " +
                         quote(dir.file("expected.csv")));
    }
    for (const std::string& command : commands) {
      auto result = zt::run_command(zoobench_command(command) + " 2>&1");
      EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
      EXPECT_THAT(result.output, HasSubstr(csv + said)) << command;
    }
    EXPECT_FALSE(fs::exists(dir.file("merged.csv")));
  }
  // A JSON results file's record of an unknown status.
  const std::string json = dir.file("bad_accuracy.json");
  write_text(json,
             "{\"format\": \"zoobench-results/1\", \"kind\": \"accuracy\", \"records\": "
             "[{\"kind\": \"accuracy\", \"cells\": {\"name\": \"x\", \"accuracy\": \"pas\"}}]}");
  auto merged = zt::run_command(
      zoobench_command("merge " + quote(json) + " -o " + quote(dir.file("merged2.csv"))) + " 2>&1");
  EXPECT_EQ(merged.exit_code, 2) << merged.output;
  EXPECT_THAT(merged.output, HasSubstr(json + ": record 1: unknown status 'pas'"));
}

}  // namespace
