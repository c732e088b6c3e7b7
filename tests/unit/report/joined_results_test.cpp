// Joining rows by model: one accuracy column per device, one performance series per backend,
// models without performance rows, upstream files with only upstream columns; and the summary
// numbers (pass rate, geometric means) against hand-computed values.
#include "zoobench/report/joined_results.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report_rows.h"
#include "testing/testing.h"
#include "zoobench/report/summary.h"
#include "zoobench/results/result_files.h"
#include "zoobench/util/files.h"

namespace zoobench::report {
namespace {

using testing::accuracy_row;
using testing::performance_row;

TEST(JoinResults, DevicesBecomeAccuracyColumns) {
  JoinedResults joined = join_results({
      accuracy_row("cuda", "resnet18", "pass"),
      accuracy_row("npu", "resnet18", "fail_accuracy", {{"reason", "output[0] differs"}}),
      accuracy_row("cuda", "bert", "pass", {{"margin", "0.25"}}),
  });
  ASSERT_EQ(joined.accuracy_columns.size(), 2u);
  EXPECT_EQ(joined.accuracy_columns[0].header(), "cuda_accuracy");
  EXPECT_EQ(joined.accuracy_columns[1].header(), "npu_accuracy");
  ASSERT_EQ(joined.models.size(), 2u);
  // Sorted by name; bert has no npu row.
  EXPECT_EQ(joined.models[0].name, "bert");
  ASSERT_TRUE(joined.models[0].accuracy[0]);
  EXPECT_EQ(joined.models[0].accuracy[0]->margin, 0.25);
  EXPECT_FALSE(joined.models[0].accuracy[1]);
  EXPECT_EQ(joined.models[1].name, "resnet18");
  EXPECT_TRUE(joined.models[1].accuracy[0]->passed());
  EXPECT_FALSE(joined.models[1].accuracy[1]->passed());
  EXPECT_EQ(joined.models[1].accuracy[1]->reason, "output[0] differs");
  EXPECT_TRUE(joined.performance_series.empty());
  EXPECT_EQ(joined.devices, (std::vector<std::string>{"cuda", "npu"}));
}

TEST(JoinResults, BackendsSideBySide) {
  JoinedResults joined = join_results({
      performance_row("cuda", "resnet18", "jit", 10, 5),
      performance_row("cuda", "resnet18", "aot_inductor", 10.2, 3.4),
      performance_row("cuda", "bert", "jit", 8, 8),
  });
  ASSERT_EQ(joined.performance_series.size(), 2u);
  EXPECT_EQ(joined.performance_series[0].label, "jit");
  EXPECT_EQ(joined.performance_series[1].label, "aot_inductor");
  // Same device, mode and dtype: one eager context shared by both backends.
  EXPECT_EQ(joined.performance_contexts(), std::vector<std::string>{""});
  ASSERT_EQ(joined.models.size(), 2u);
  const JoinedModel& resnet = joined.models[1];
  EXPECT_DOUBLE_EQ(*resnet.performance[0]->speedup, 2.0);
  EXPECT_DOUBLE_EQ(*resnet.performance[1]->speedup, 3.0);
  EXPECT_FALSE(joined.models[0].performance[1]);  // bert ran only with jit
}

TEST(JoinResults, PerformanceOnTwoDevicesGetsOneEagerContextPerDevice) {
  JoinedResults joined = join_results({
      performance_row("cpu", "resnet18", "jit", 40, 20),
      performance_row("cuda", "resnet18", "jit", 4, 1),
  });
  ASSERT_EQ(joined.performance_series.size(), 2u);
  EXPECT_EQ(joined.performance_series[0].context, "cpu");
  EXPECT_EQ(joined.performance_series[0].label, "cpu_jit");
  EXPECT_EQ(joined.performance_series[1].label, "cuda_jit");
}

TEST(JoinResults, ModelWithoutPerformanceKeepsItsAccuracy) {
  JoinedResults joined = join_results({
      accuracy_row("cuda", "resnet18", "pass"),
      accuracy_row("cuda", "vit", "fail_to_run", {{"reason", "RuntimeError: boom"}}),
      performance_row("cuda", "resnet18", "jit", 10, 5),
  });
  ASSERT_EQ(joined.models.size(), 2u);
  EXPECT_EQ(joined.models[1].name, "vit");
  ASSERT_EQ(joined.models[1].performance.size(), 1u);
  EXPECT_FALSE(joined.models[1].performance[0]);
  EXPECT_TRUE(joined.models[0].performance[0]);
}

TEST(JoinResults, UpstreamOnlyColumnsFromFiles) {
  zoobench::testing::ScratchDir dir;
  write_file_atomically(dir.file("up_accuracy.csv"),
                        "dev,name,batch_size,accuracy\ncuda,resnet18,16,pass\n"
                        "cuda,alexnet,16,fail_accuracy\n");
  write_file_atomically(dir.file("up_performance.csv"),
                        "dev,name,batch_size,speedup,abs_latency,compilation_latency,"
                        "compression_ratio,eager_peak_mem,dynamo_peak_mem\n"
                        "cuda,resnet18,16,1.5,4.0,12.5,0.9,1.2,1.3\n"
                        "cuda,alexnet,16,0,0,0,0,0,0\n");
  std::vector<ResultRow> rows;
  for (const char* file : {"up_accuracy.csv", "up_performance.csv"}) {
    ResultFile loaded = load_result_file(dir.file(file));
    EXPECT_FALSE(loaded.with_detail);
    rows.insert(rows.end(), loaded.rows.begin(), loaded.rows.end());
  }
  JoinedResults joined = join_results(rows);
  ASSERT_EQ(joined.accuracy_columns.size(), 1u);
  EXPECT_EQ(joined.accuracy_columns[0].header(), "cuda_accuracy");
  ASSERT_EQ(joined.performance_series.size(), 1u);
  EXPECT_EQ(joined.performance_series[0].label, "compiled");  // no backend column upstream
  const PerformanceCell& resnet = *joined.models[1].performance[0];
  EXPECT_TRUE(resnet.passed());
  EXPECT_DOUBLE_EQ(*resnet.compiled_ms, 4.0);
  EXPECT_DOUBLE_EQ(*resnet.eager_ms, 6.0);  // abs_latency * speedup
  EXPECT_DOUBLE_EQ(*resnet.compilation_latency_s, 12.5);
  EXPECT_FALSE(resnet.op_speedup);
  // Upstream marks a failed performance run with a zero speedup only.
  const PerformanceCell& alexnet = *joined.models[0].performance[0];
  EXPECT_FALSE(alexnet.passed());
  EXPECT_FALSE(alexnet.speedup);
}

TEST(JoinResults, ConflictingDuplicateWarnsAndKeepsTheLaterRow) {
  JoinedResults joined = join_results({
      accuracy_row("cuda", "resnet18", "fail_accuracy"), accuracy_row("cuda", "resnet18", "pass"),
      accuracy_row("cuda", "bert", "pass"),
      accuracy_row("cuda", "bert", "pass"),  // identical: no warning
  });
  ASSERT_EQ(joined.warnings.size(), 1u);
  EXPECT_NE(joined.warnings[0].find("resnet18"), std::string::npos);
  EXPECT_EQ(joined.models[1].accuracy[0]->status, "pass");
}

// Six backends' files, each with the model twice: each warning says which file's rows it means.
TEST(JoinResults, DuplicateWarningsNameTheBackend) {
  std::vector<ResultRow> rows;
  for (const char* backend : {"jit", "inductor"}) {
    rows.push_back(accuracy_row("cuda", "deberta", "pass", {{"backend", backend}}));
    rows.push_back(accuracy_row("cuda", "deberta", "pass_due_to_skip", {{"backend", backend}}));
    rows.push_back(performance_row("cuda", "deberta", backend, 10, 5));
    rows.push_back(performance_row("cuda", "deberta", backend, 10, 4));
  }
  JoinedResults joined = join_results(rows);
  ASSERT_EQ(joined.warnings.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string backend = i < 2 ? "backend jit " : "backend inductor ";
    EXPECT_NE(joined.warnings[i].find(backend), std::string::npos) << joined.warnings[i];
  }
  EXPECT_NE(joined.warnings[0].find("(pass then pass_due_to_skip)"), std::string::npos)
      << joined.warnings[0];
}

TEST(Summary, GeometricMeanByHand) {
  EXPECT_FALSE(geometric_mean({}));
  EXPECT_DOUBLE_EQ(*geometric_mean({2.0, 8.0}), 4.0);
  EXPECT_NEAR(*geometric_mean({1.0, 2.0, 4.0}), 2.0, 1e-12);
  EXPECT_NEAR(*geometric_mean({0.5, 2.0}), 1.0, 1e-12);
}

TEST(Summary, PassRateAndGeomeanOverModelsThatHaveThem) {
  JoinedResults joined = join_results({
      accuracy_row("cuda", "a", "pass"),
      accuracy_row("cuda", "b", "pass_due_to_skip"),
      accuracy_row("cuda", "c", "fail_accuracy"),
      accuracy_row("cuda", "d", "skipped"),  // not counted
      accuracy_row("npu", "a", "OOM"),
      performance_row("cuda", "a", "jit", 10, 5,  // 2x
                      {{"eager_op_ms", "8"},
                       {"compiled_op_ms", "2"},
                       {"compilation_latency", "3"},
                       {"compression_ratio", "2"}}),
      performance_row("cuda", "b", "jit", 4, 1,  // 4x
                      {{"compilation_latency", "5"}, {"compression_ratio", "0.5"}}),
      performance_row("cuda", "c", "jit", 1, 1, {{"status", "fail_to_run"}, {"speedup", "0"}}),
  });
  ReportSummary summary = summarize(joined);
  // cuda: a, b pass of a, b, c; npu: a fails.
  EXPECT_EQ(summary.per_column[0].passed, 2);
  EXPECT_EQ(summary.per_column[0].total, 3);
  EXPECT_EQ(summary.per_column[1].passed, 0);
  EXPECT_EQ(summary.per_column[1].total, 1);
  EXPECT_EQ(summary.overall.passed, 2);
  EXPECT_EQ(summary.overall.total, 4);
  EXPECT_DOUBLE_EQ(*summary.overall.fraction(), 0.5);
  const SeriesSummary& jit = summary.per_series[0];
  EXPECT_NEAR(*jit.geomean_speedup, std::sqrt(2.0 * 4.0), 1e-12);  // the failed model is left out
  EXPECT_EQ(jit.models_with_speedup, 2);
  EXPECT_NEAR(*jit.geomean_op_speedup, 4.0, 1e-12);  // only a has kernel times: 8 / 2
  EXPECT_EQ(jit.models_with_op_speedup, 1);
  EXPECT_NEAR(*jit.mean_compilation_latency_s, 4.0, 1e-12);
  EXPECT_NEAR(*jit.geomean_compression_ratio, 1.0, 1e-12);
  EXPECT_EQ(jit.failed, 1);
}

}  // namespace
}  // namespace zoobench::report
