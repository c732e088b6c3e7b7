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

// Preparation and warm-up hold the process's device gate shared, the timed section (the
// interleaved timing and the kernel profile) holds it alone (util/device_gate.h): with several
// model pipelines on one device, or an export beside a run, no other work runs on the device
// while a model is timed.
struct PerformanceOptions {
  MeasurementSettings measurement;
  int profiled_iterations = 5;  // iterations in the Kineto pass (CUDA)
  // The eager side is the uncompiled Python module itself (a run whose backends are all of the
  // torch.compile family): the compiled side's uncompiled module is not timed a second time.
  bool python_reference = false;
  // --pause-pipelines: the timed section pauses the run's other model pipelines on the device
  // (util/pipeline_pause.h), so that the CPUs' caches and clocks are the timing's too.
  bool pause_pipelines = false;
  // A timing that comes out unstable while other pipelines are at work on the device is timed
  // once more with them paused; the record keeps the first timing's spreads (FirstTiming).
  // Parallel pipelines share the host's caches, memory bandwidth and clocks with the timing,
  // and a launch-bound side feels it: the rows then say how often that decided the flag.
  bool retime_unstable = true;
};

// When the timed section held the device alone: seconds since the Unix epoch, wall clock.
struct TimedSection {
  double from_s = 0, to_s = 0;
};

// The timing an unstable one replaced: taken beside the other pipelines, which the second paused.
struct FirstTiming {
  double eager_spread = 0, compiled_spread = 0;  // stats::robust_spread, as the flag reads it
  double speedup = 0;
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
  std::optional<TimedSection> timed_section;
  // What the run's other model processes were doing when the timed section began (their
  // phases: compiling, waiting for the device): the device was this model's alone, the CPUs
  // not necessarily.
  std::vector<std::string> beside_timing;
  // The pipelines it paused for the section (their log stems), and whether the pause's bound
  // ended before the section did (the rest of the section ran beside them).
  std::vector<std::string> paused_for_timing;
  bool pause_ended_early = false;
  std::optional<FirstTiming> unstable_beside_others;  // set when the timing was taken again
  // The host's cost of one small op on the device at the section's start (launch_cost.h).
  std::optional<double> op_launch_us;
  // CUBLAS_WORKSPACE_CONFIG where the timing ran on a CUDA device (a user's value): PyTorch
  // parses it on every cuBLAS call, so an eager side of many small matmuls reads slow.
  std::optional<std::string> cublas_workspace_config;
};

PerformanceRecord run_performance_experiment(const Manifest& manifest, Backend& eager, Backend& compiled,
                                             const BackendRequest& request,
                                             const std::vector<c10::IValue>& inputs,
                                             const PerformanceOptions& options);

}  // namespace zoobench
