// Performance experiment: what runs in which order, and what each failure means.
#include "zoobench/perf/experiment.h"

#include <chrono>

#include "zoobench/perf/kernel_time.h"
#include "zoobench/util/file_lock.h"
#include "zoobench/perf/memory.h"
#include "zoobench/perf/timer.h"
#include "zoobench/results/failure.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

std::function<void()> iteration_of(Executable& executable, const BackendRequest& request,
                                   const std::vector<c10::IValue>& inputs, bool clone_each) {
  if (request.mode == Mode::kTraining) {
    return [&executable, &inputs, clone_each] {
      executable.step(clone_each ? clone_inputs(inputs) : inputs);
    };
  }
  return [&executable, &inputs, clone_each] { executable.run(clone_each ? clone_inputs(inputs) : inputs); };
}

// Peak memory of a couple of iterations, over what was allocated before `baseline`. The side's
// first iteration runs before the peak is reset: it holds one-time allocations that only the
// side running first would pay. On the H200, eager against eager (mobilenetv3 training) peaked
// at 3.22 GB on the first side and 0.43 GB on the second; most likely cuDNN's algorithm search
// in benchmark mode, whose candidates get their own workspaces and whose choices the second
// side finds cached.
std::optional<int64_t> peak_of(const std::function<void()>& iteration, const c10::Device& device,
                               int64_t baseline) {
  iteration();
  PeakMemoryScope scope(device);
  for (int i = 0; i < 2; ++i) iteration();
  auto peak = scope.peak_bytes();
  if (!peak) return std::nullopt;
  return device.is_cuda() ? std::max<int64_t>(*peak - baseline, 0) : *peak;
}

}  // namespace

PerformanceRecord run_performance_experiment(const Manifest& manifest, Backend& eager_backend,
                                             Backend& compiled_backend, const BackendRequest& request,
                                             const std::vector<c10::IValue>& inputs,
                                             const PerformanceOptions& options) {
  PerformanceRecord record;
  const c10::Device device = request.device;
  const bool clone_each = !manifest.mutated_inputs.empty();
  const int64_t before_models = device.is_cuda() ? compat::cuda_allocated_bytes(device.index()) : 0;

  // The eager baseline never runs in a CUDA graph.
  BackendRequest eager_request = request;
  eager_request.cudagraphs = false;
  std::unique_ptr<Executable> eager;
  try {
    crash_report::PhaseScope phase("performance: eager load");
    eager = eager_backend.prepare(manifest, eager_request, inputs);
  } catch (const ModelLoadError& e) {
    record.status = status_for_failure(Phase::kLoad, e.what());
    record.reason = first_line(e.what());
    return record;
  } catch (...) {
    std::string message = logged_exception_message(manifest.name + " (performance)");
    record.status = status_for_failure(Phase::kEagerFirstRun, message);
    record.reason = "eager: " + first_line(message);
    return record;
  }
  auto eager_iteration = iteration_of(*eager, eager_request, inputs, clone_each);
  const int64_t eager_static = device.is_cuda() ? compat::cuda_allocated_bytes(device.index()) - before_models : 0;
  try {
    crash_report::PhaseScope phase("performance: eager warm-up");
    record.eager_peak_bytes = peak_of(eager_iteration, device, before_models);
  } catch (...) {
    std::string message = logged_exception_message(manifest.name + " (performance)");
    record.status = status_for_failure(Phase::kEagerFirstRun, message);
    record.reason = "eager: " + first_line(message);
    return record;
  }

  std::unique_ptr<Executable> compiled;
  auto prepare_start = std::chrono::steady_clock::now();
  try {
    crash_report::PhaseScope phase("performance: " + compiled_backend.name() + " prepare");
    compiled = compiled_backend.prepare(manifest, request, inputs);
  } catch (const ModelLoadError& e) {
    record.status = status_for_failure(Phase::kLoad, e.what());
    record.reason = compiled_backend.name() + ": " + first_line(e.what());
    return record;
  } catch (...) {
    std::string message = logged_exception_message(manifest.name + " (performance)");
    record.status = status_for_failure(Phase::kCompiled, message);
    record.reason = compiled_backend.name() + ": " + first_line(message);
    return record;
  }
  if (device.is_cuda()) compat::cuda_synchronize(device.index());
  double prepare_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - prepare_start).count();
  record.compiled_info = compiled->info();
  auto compiled_iteration = iteration_of(*compiled, request, inputs, clone_each);

  try {
    // Subtract the eager model's own resident memory: it is still loaded beside the compiled one.
    crash_report::PhaseScope phase("performance: " + compiled_backend.name() + " warm-up");
    record.compiled_peak_bytes = peak_of(compiled_iteration, device, before_models + eager_static);
    auto timer = make_timer(device);
    // The compiled model's own uncompiled form (Python eager beside torch.compile), timed in
    // the same rounds: upstream's speedup is against it.
    std::function<void()> uncompiled_iteration;
    if (Executable* uncompiled = compiled->uncompiled()) {
      uncompiled_iteration = iteration_of(*uncompiled, request, inputs, clone_each);
    }
    crash_report::set_phase("performance: waiting for the export under way to end");
    ExclusiveFileLock quiet(options.timing_lock);
    crash_report::set_phase("performance: interleaved timing");
    record.measurement = measure_interleaved(eager_iteration, compiled_iteration, *timer, options.measurement,
                                             uncompiled_iteration);
    crash_report::set_phase("performance: kernel-time profile");
    if (auto eager_kernels = measure_kernel_time(eager_iteration, options.profiled_iterations, device)) {
      record.eager_kernel_ms = eager_kernels->total_ms;
      record.eager_kernels = std::move(eager_kernels->kernels);
    }
    if (auto compiled_kernels = measure_kernel_time(compiled_iteration, options.profiled_iterations, device)) {
      record.compiled_kernel_ms = compiled_kernels->total_ms;
      record.compiled_kernels = std::move(compiled_kernels->kernels);
    }
    // Read again: recompilations during the timing count too.
    record.compiled_info = compiled->info();
  } catch (...) {
    std::string message = logged_exception_message(manifest.name + " (performance)");
    record.status = status_for_failure(Phase::kCompiled, message);
    record.reason = first_line(message);
    return record;
  }
  const auto& m = record.measurement;
  // A backend that can tell its compile from the rest of its preparation (rebuilding a Python
  // module is not compiling it) says so; otherwise all of preparation counts.
  const double compile_seconds = record.compiled_info.compile_seconds.value_or(prepare_seconds);
  record.compilation_latency_s =
      compile_seconds + std::max(0.0, m.compiled.first_iteration_ms - m.compiled.median_ms) / 1e3;
  record.eager_launch_bound = is_launch_bound(m.eager.median_ms, record.eager_kernel_ms);
  record.compiled_launch_bound = is_launch_bound(m.compiled.median_ms, record.compiled_kernel_ms);
  if (m.unstable) record.reason = m.note;
  if (!record.compiled_info.note.empty()) {
    record.reason = record.reason.empty() ? record.compiled_info.note : record.reason + "; " + record.compiled_info.note;
  }
  return record;
}

}  // namespace zoobench
