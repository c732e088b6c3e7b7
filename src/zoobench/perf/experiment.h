// The performance experiment for one model: prepare eager and compiled, measure them
// interleaved, then kernel time and peak memory, into a PerformanceRecord.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"
#include "zoobench/perf/kernel_time.h"
#include "zoobench/perf/measurement.h"
#include "zoobench/results/status.h"

namespace zoobench {

struct PerformanceOptions {
  MeasurementSettings measurement;
  int profiled_iterations = 5;  // iterations in the Kineto pass (CUDA)
  // A file locked (exclusively) for the timed section, the interleaved timing and the kernel
  // profile: a run that exports models on demand holds it during each export, so no export
  // runs beside a timing. "": none.
  std::string timing_lock;
};

struct PerformanceRecord {
  Status status = Status::kPass;
  std::string reason;
  PairedMeasurement measurement;
  std::optional<double> eager_kernel_ms, compiled_kernel_ms;
  // Where each side's kernel time went (largest kernels first), from the same profiled pass.
  std::vector<KernelShare> eager_kernels, compiled_kernels;
  std::optional<int64_t> eager_peak_bytes, compiled_peak_bytes;
  double compilation_latency_s = 0;
  ExecutionInfo compiled_info;
  bool eager_launch_bound = false, compiled_launch_bound = false;
};

PerformanceRecord run_performance_experiment(const Manifest& manifest, Backend& eager, Backend& compiled,
                                             const BackendRequest& request,
                                             const std::vector<c10::IValue>& inputs,
                                             const PerformanceOptions& options);

}  // namespace zoobench
