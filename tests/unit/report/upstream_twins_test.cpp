// report and merge count each model once when given a folder that holds zoobench's result file
// and its `--output-format upstream` twin: the twin, named by upstream_file_name() beside
// zoobench's file and holding upstream's rows, is left out, and a note says of which file.
#include "zoobench/report/upstream_twins.h"

#include <gtest/gtest.h>

#include "report_rows.h"
#include "zoobench/results/upstream_format.h"

namespace zoobench::report {
namespace {

using testing::accuracy_row;

ResultFile zoobench_file(const std::string& path, const std::vector<std::string>& models) {
  ResultFile file;
  file.path = path;
  for (const auto& model : models) {
    ResultRow row = accuracy_row("cpu", model, "pass", {{"suite", "gate"}});
    file.rows.push_back(row);
  }
  return file;
}

// The same rows as upstream's sink writes them: upstream's columns only.
ResultFile upstream_file(const std::string& path, const std::vector<std::string>& models) {
  ResultFile file;
  file.path = path;
  file.columns = upstream_columns(ExperimentKind::kAccuracy);
  for (const auto& model : models) {
    ResultRow row;
    row.kind = ExperimentKind::kAccuracy;
    row.cells = {{"dev", "cpu"}, {"name", model}, {"batch_size", "4"}, {"accuracy", "pass"}};
    file.rows.push_back(row);
  }
  return file;
}

constexpr const char* kOurs = "results/gate_jit_inference_float32_cpu_accuracy.csv";
constexpr const char* kTwin = "results/jit_gate_float32_inference_cpu_accuracy.csv";

TEST(UpstreamTwins, TheTwinBesideZoobenchsFileIsLeftOut) {
  ASSERT_EQ(upstream_file_name(zoobench_file(kOurs, {"a"}).rows[0]),
            "jit_gate_float32_inference_cpu_accuracy.csv");
  // Given in either order, and spelt another way (./results/...).
  TwinSelection selection = leave_out_upstream_twins(
      {upstream_file("./" + std::string(kTwin), {"a", "b"}), zoobench_file(kOurs, {"a", "b"})});
  ASSERT_EQ(selection.files.size(), 1u);
  EXPECT_EQ(selection.files[0].path, kOurs);
  ASSERT_EQ(selection.notes.size(), 1u);
  EXPECT_EQ(selection.notes[0],
            "left out ./" + std::string(kTwin) + ": the upstream-format twin of " + kOurs +
                " (the same 2 row(s) in upstream's columns); each model is counted once, from "
                "zoobench's file");
}

TEST(UpstreamTwins, RowsOfModelsThatZoobenchsFileLacksAreKept) {
  TwinSelection selection =
      leave_out_upstream_twins({zoobench_file(kOurs, {"a"}), upstream_file(kTwin, {"a", "c"})});
  ASSERT_EQ(selection.files.size(), 2u);
  ASSERT_EQ(selection.files[1].rows.size(), 1u);
  EXPECT_EQ(cell(selection.files[1].rows[0], columns::kName), "c");
  ASSERT_EQ(selection.notes.size(), 1u);
  EXPECT_NE(selection.notes[0].find("its 1 row(s) of models that " + std::string(kOurs) +
                                    " lacks are read (c)"),
            std::string::npos)
      << selection.notes[0];
}

TEST(UpstreamTwins, OtherUpstreamFilesAreKeptWhole) {
  // In another folder (upstream's own harness writes its files elsewhere), or with no zoobench
  // file beside it, or another name: not a twin.
  for (const std::string path : {"upstream/jit_gate_float32_inference_cpu_accuracy.csv",
                                 "results/inductor_gate_float32_inference_cpu_accuracy.csv"}) {
    TwinSelection selection =
        leave_out_upstream_twins({zoobench_file(kOurs, {"a"}), upstream_file(path, {"a"})});
    EXPECT_EQ(selection.files.size(), 2u) << path;
    EXPECT_TRUE(selection.notes.empty()) << path;
  }
  TwinSelection alone = leave_out_upstream_twins({upstream_file(kTwin, {"a"})});
  EXPECT_EQ(alone.files.size(), 1u);
  // A zoobench file is never a twin, whatever its name.
  TwinSelection named_alike =
      leave_out_upstream_twins({zoobench_file(kOurs, {"a"}), zoobench_file(kTwin, {"a"})});
  EXPECT_EQ(named_alike.files.size(), 2u);
}

}  // namespace
}  // namespace zoobench::report
