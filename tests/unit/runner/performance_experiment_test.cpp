// The performance experiment end to end on the CPU on small exported models: the record and its
// CSV row are complete, and its numbers are consistent with each other. (No assertion on how
// fast anything is: timings belong in bench/ and docs/.)
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "unit/backends/small_zoo.h"
#include "zoobench/perf/experiment.h"
#include "zoobench/results/rows.h"
#include "zoobench/runner/record_rows.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

PerformanceOptions quick_options() {
  PerformanceOptions options;
  options.measurement.warmup_iterations = 2;
  options.measurement.min_warmup_seconds = 0.05;
  options.measurement.repeat = 10;
  options.measurement.bootstrap_resamples = 500;
  return options;
}

PerformanceRecord run(const std::string& model, const std::string& backend, Mode mode) {
  const std::string zoo = testing::small_zoo_dir();
  EXPECT_FALSE(zoo.empty());
  Manifest manifest = read_manifest(testing::small_model_manifest(zoo, model));
  auto eager = make_backend("eager");
  auto compiled = make_backend(backend);
  BackendRequest request;
  request.mode = mode;
  return run_performance_experiment(manifest, *eager, *compiled, request,
                                    load_inputs(manifest, c10::Device(c10::kCPU)), quick_options());
}

void expect_consistent_side(const SideSummary& side, int repeat) {
  ASSERT_EQ(side.samples_ms.size(), static_cast<std::size_t>(repeat));
  for (double s : side.samples_ms) EXPECT_GT(s, 0.0);
  EXPECT_GT(side.min_ms, 0.0);
  EXPECT_LE(side.min_ms, side.p10_ms);
  EXPECT_LE(side.p10_ms, side.median_ms);
  EXPECT_LE(side.median_ms, side.p90_ms);
  EXPECT_TRUE(std::isfinite(side.cov));
  EXPECT_GE(side.cov, 0.0);
  EXPECT_GT(side.first_iteration_ms, 0.0);
  EXPECT_FALSE(side.device_median_ms.has_value()) << "no device time on the CPU";
}

TEST(PerformanceExperiment, InferenceRecordIsComplete) {
  PerformanceRecord r = run("conv_bn_relu", "jit", Mode::kInference);
  ASSERT_EQ(r.status, Status::kPass) << r.reason;
  const PairedMeasurement& m = r.measurement;
  expect_consistent_side(m.eager, 10);
  expect_consistent_side(m.compiled, 10);
  EXPECT_GE(m.iterations_per_run, 1);
  EXPECT_GT(m.speedup, 0.0);
  EXPECT_DOUBLE_EQ(m.speedup, m.eager.median_ms / m.compiled.median_ms);
  EXPECT_LE(m.speedup_ci_low, m.speedup);
  EXPECT_GE(m.speedup_ci_high, m.speedup);
  EXPECT_EQ(m.unstable, m.eager.unstable || m.compiled.unstable);
  EXPECT_GT(r.compilation_latency_s, 0.0);
  // Peak resident memory on the CPU.
  EXPECT_TRUE(r.eager_peak_bytes.has_value());
  EXPECT_TRUE(r.compiled_peak_bytes.has_value());
  // Kernel time is CUDA's (a profiled pass); the CPU has none, so neither side is launch-bound.
  EXPECT_FALSE(r.eager_kernel_ms.has_value());
  EXPECT_FALSE(r.compiled_kernel_ms.has_value());
  EXPECT_FALSE(r.eager_launch_bound);
  EXPECT_FALSE(r.compiled_launch_bound);
  EXPECT_EQ(r.compiled_info.cudagraphs, "off");
  // The host's cost of a small op, measured where the timing began.
  ASSERT_TRUE(r.op_launch_us.has_value());
  EXPECT_GT(*r.op_launch_us, 0.0);
  EXPECT_LT(*r.op_launch_us, 1e5);
}

TEST(PerformanceExperiment, TrainingRecordIsComplete) {
  PerformanceRecord r = run("mlp", "jit", Mode::kTraining);
  ASSERT_EQ(r.status, Status::kPass) << r.reason;
  expect_consistent_side(r.measurement.eager, 10);
  expect_consistent_side(r.measurement.compiled, 10);
  EXPECT_GT(r.measurement.speedup, 0.0);
  EXPECT_LE(r.measurement.speedup_ci_low, r.measurement.speedup);
  EXPECT_GE(r.measurement.speedup_ci_high, r.measurement.speedup);
}

// Every column of the performance CSV is filled on the CPU except those that only CUDA measures
// (kernel time and what derives from it) and those this call had nothing for.
TEST(PerformanceExperiment, RowFillsEveryCpuColumn) {
  PerformanceRecord r = run("encoder_layer", "jit", Mode::kInference);
  ASSERT_EQ(r.status, Status::kPass) << r.reason;
  RowContext context{"cpu",        "encoder_layer", 2,  "jit",   "inference", "float32",
                     {},           "contiguous",    "", "small", "zoobench",  {},
                     "torchscript"};
  ResultRow row = performance_row(r, context);
  const std::set<std::string> cuda_only = {"eager_op_ms", "compiled_op_ms", "op_speedup",
                                           "launch_bound"};
  // Only the torch.compile family has an uncompiled Python side and dynamo's counts.
  const std::set<std::string> torch_compile_only = {"python_eager_latency", "python_speedup",
                                                    "graphs", "graph_breaks", "recompiles"};
  // job_s, export_s: the child's and the exporter's seconds, which the parent writes
  // (worker_pool.cpp).
  const std::set<std::string> may_be_empty = {"patches",      "log",   "reason",
                                              "switches_off", "job_s", "export_s"};
  for (const std::string& column : result_columns(ExperimentKind::kPerformance)) {
    const std::string cell = row.cells.count(column) ? row.cells.at(column) : "";
    if (cuda_only.count(column) || torch_compile_only.count(column)) {
      EXPECT_TRUE(cell.empty()) << column << " = " << cell;
    } else if (!may_be_empty.count(column)) {
      EXPECT_FALSE(cell.empty()) << column << " is empty";
    }
  }
  EXPECT_EQ(row.cells["status"], "pass");
  EXPECT_EQ(row.cells["repeat"], "10");
  EXPECT_EQ(row.cells["unstable"], r.measurement.unstable ? "1" : "0");
  EXPECT_EQ(row.detail["eager_samples_ms"].size(), 10u);
}

TEST(PerformanceExperiment, BackendThatCannotLoadIsARowNotACrash) {
  const std::string zoo = testing::small_zoo_dir();
  Manifest manifest = read_manifest(testing::small_model_manifest(zoo, "mlp"));
  auto eager = make_backend("eager");
  auto aoti = make_backend("aot_inductor");  // no package in this zoo
  BackendRequest request;
  PerformanceRecord r =
      run_performance_experiment(manifest, *eager, *aoti, request,
                                 load_inputs(manifest, c10::Device(c10::kCPU)), quick_options());
  EXPECT_EQ(r.status, Status::kModelFailToLoad) << r.reason;
  EXPECT_NE(r.reason.find("aot_inductor"), std::string::npos) << r.reason;
  RowContext context{"cpu", "mlp", 4, "aot_inductor", "inference", "float32", {}, "contiguous", ""};
  EXPECT_EQ(performance_row(r, context).cells["speedup"], "0");
}

}  // namespace
}  // namespace zoobench
