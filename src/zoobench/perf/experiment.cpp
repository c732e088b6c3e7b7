// Performance experiment: what runs in which order, and what each failure means.
#include "zoobench/perf/experiment.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "zoobench/perf/kernel_time.h"
#include "zoobench/perf/launch_cost.h"
#include "zoobench/perf/memory.h"
#include "zoobench/perf/timer.h"
#include "zoobench/results/failure.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/device_gate.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/util/pipeline_pause.h"
#include "zoobench/util/text.h"
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

// What one experiment holds between its steps.
struct Timing {
  const Manifest& manifest;
  const BackendRequest& request;
  const std::vector<c10::IValue>& inputs;
  const PerformanceOptions& options;
  PerformanceRecord& record;
  c10::Device device;
  bool clone_each;
  int64_t before_models = 0, eager_static = 0;
  std::unique_ptr<Executable> eager, compiled;
  std::function<void()> eager_iteration, compiled_iteration;
  double prepare_seconds = 0;
};

// Ends the experiment with this status; false, for `return fail(...)` in the steps below.
bool fail(PerformanceRecord& record, Status status, std::string reason) {
  record.status = status;
  record.reason = std::move(reason);
  return false;
}

bool failed_run(PerformanceRecord& record, Phase phase, const std::string& manifest_name,
                const std::string& who) {
  std::string message = logged_exception_message(manifest_name + " (performance)");
  return fail(record, status_for_failure(phase, message), who + first_line(message));
}

// The eager baseline (never in a CUDA graph): loaded, warmed up, its peak memory read.
bool prepare_eager(Timing& t, Backend& eager_backend) {
  BackendRequest eager_request = t.request;
  eager_request.cudagraphs = false;
  try {
    crash_report::PhaseScope phase("performance: eager load");
    t.eager = eager_backend.prepare(t.manifest, eager_request, t.inputs);
  } catch (const ModelLoadError& e) {
    return fail(t.record, status_for_failure(Phase::kLoad, e.what()), first_line(e.what()));
  } catch (...) {
    return failed_run(t.record, Phase::kEagerFirstRun, t.manifest.name, "eager: ");
  }
  t.eager_iteration = iteration_of(*t.eager, eager_request, t.inputs, t.clone_each);
  if (t.device.is_cuda())
    t.eager_static = compat::cuda_allocated_bytes(t.device.index()) - t.before_models;
  try {
    crash_report::PhaseScope phase("performance: eager warm-up");
    t.record.eager_peak_bytes = peak_of(t.eager_iteration, t.device, t.before_models);
  } catch (...) {
    return failed_run(t.record, Phase::kEagerFirstRun, t.manifest.name, "eager: ");
  }
  return true;
}

// The compiled side, prepared (compiled, captured) and timed as its compile.
bool prepare_compiled(Timing& t, Backend& compiled_backend) {
  auto prepare_start = std::chrono::steady_clock::now();
  try {
    crash_report::PhaseScope phase("performance: " + compiled_backend.name() + " prepare");
    t.compiled = compiled_backend.prepare(t.manifest, t.request, t.inputs);
  } catch (const ModelLoadError& e) {
    return fail(t.record, status_for_failure(Phase::kLoad, e.what()),
                compiled_backend.name() + ": " + first_line(e.what()));
  } catch (...) {
    return failed_run(t.record, Phase::kCompiled, t.manifest.name, compiled_backend.name() + ": ");
  }
  if (t.device.is_cuda()) compat::cuda_synchronize(t.device.index());
  t.prepare_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - prepare_start).count();
  t.record.compiled_info = t.compiled->info();
  t.compiled_iteration = iteration_of(*t.compiled, t.request, t.inputs, t.clone_each);
  return true;
}

// The compiled side's warm-up and peak memory, on the device beside other pipelines' work.
bool warm_up_compiled(Timing& t, const std::string& backend_name) {
  try {
    // Subtract the eager model's own resident memory: it is still loaded beside the compiled one.
    crash_report::PhaseScope phase("performance: " + backend_name + " warm-up");
    t.record.compiled_peak_bytes = peak_of(t.compiled_iteration, t.device, t.before_models + t.eager_static);
  } catch (...) {
    return failed_run(t.record, Phase::kCompiled, t.manifest.name, "");
  }
  return true;
}

double epoch_seconds(std::chrono::system_clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

// The interleaved timing (with the uncompiled Python module where there is one and the eager
// side is not that module already: upstream's speedup is against it) and the kernel-time
// profile, with the device alone: no other pipeline's work and no export runs beside them,
// and with --pause-pipelines the run's other pipelines on the device paused (their compiles off
// the CPUs).
// The longest the other pipelines stay paused for one timed section: a section that waits on
// something a paused process holds goes on after it, and a slow model's section beside them.
constexpr std::chrono::seconds kLongestPause{120};

// Pauses the other pipelines on the device into `paused` (Paused stays where it is made) while
// it holds them, naming them in the record; leaves it empty where there are none.
void pause_other_pipelines(Timing& t, std::optional<pipeline_pause::Paused>& paused) {
  if (!process_device_gate().enabled()) return;
  auto others = pipeline_pause::pipelines_on(pipeline_pause::announcement_folder(),
                                             process_device_gate().path(), ::getppid());
  if (others.empty()) return;
  paused.emplace(others, kLongestPause);
  t.record.paused_for_timing = paused->names();
}

// Times the sides interleaved into the record; an unstable timing taken beside the other
// pipelines (not paused) is taken again with them paused, the first kept as FirstTiming.
void time_sides(Timing& t, Timer& timer, const std::function<void()>& uncompiled_iteration,
                std::optional<pipeline_pause::Paused>& others_paused) {
  PairedMeasurement& m = t.record.measurement;
  auto time_once = [&](const char* phase) {
    crash_report::set_phase(phase);
    m = measure_interleaved(t.eager_iteration, t.compiled_iteration, timer, t.options.measurement,
                            uncompiled_iteration);
  };
  time_once("performance: interleaved timing");
  if (!m.unstable || !t.options.retime_unstable || others_paused) return;
  pause_other_pipelines(t, others_paused);
  if (!others_paused) return;  // nothing else at work: another timing would be the same
  t.record.unstable_beside_others = FirstTiming{m.eager.spread, m.compiled.spread, m.speedup};
  time_once("performance: interleaved timing, again with the other pipelines paused");
}

bool measure(Timing& t) {
  try {
    auto timer = make_timer(t.device);
    std::function<void()> uncompiled_iteration;
    Executable* uncompiled = t.options.python_reference ? nullptr : t.compiled->uncompiled();
    if (uncompiled)
      uncompiled_iteration = iteration_of(*uncompiled, t.request, t.inputs, t.clone_each);
    crash_report::set_phase("performance: waiting for the device to be this model's alone");
    DeviceGate::Exclusive alone(process_device_gate());
    t.record.beside_timing = crash_report::other_processes_phases();
    std::optional<pipeline_pause::Paused> others_paused;
    if (t.options.pause_pipelines) pause_other_pipelines(t, others_paused);
    t.record.op_launch_us = op_launch_cost_us(t.device);
    t.record.cublas_workspace_config = compat::cublas_workspace_config_for_timing(t.device);
    time_sides(t, *timer, uncompiled_iteration, others_paused);
    crash_report::set_phase("performance: kernel-time profile");
    const int profiled = t.options.profiled_iterations;
    if (auto eager_kernels = measure_kernel_time(t.eager_iteration, profiled, t.device)) {
      t.record.eager_kernel_ms = eager_kernels->total_ms;
      t.record.eager_kernels = std::move(eager_kernels->kernels);
    }
    if (auto compiled_kernels = measure_kernel_time(t.compiled_iteration, profiled, t.device)) {
      t.record.compiled_kernel_ms = compiled_kernels->total_ms;
      t.record.compiled_kernels = std::move(compiled_kernels->kernels);
    }
    // Read again: recompilations during the timing count too.
    t.record.compiled_info = t.compiled->info();
    t.record.timed_section =
        TimedSection{epoch_seconds(alone.since()), epoch_seconds(std::chrono::system_clock::now())};
    t.record.pause_ended_early = others_paused && others_paused->ended_by_bound();
  } catch (...) {
    return failed_run(t.record, Phase::kCompiled, t.manifest.name, "");
  }
  return true;
}

// Compile latency, launch-boundness, and the reason a passing row still carries.
void summarize(Timing& t) {
  PerformanceRecord& record = t.record;
  const auto& m = record.measurement;
  // A backend that can tell its compile from the rest of its preparation (rebuilding a Python
  // module is not compiling it) says so; otherwise all of preparation counts.
  const double compile_seconds = record.compiled_info.compile_seconds.value_or(t.prepare_seconds);
  record.compilation_latency_s =
      compile_seconds + std::max(0.0, m.compiled.first_iteration_ms - m.compiled.median_ms) / 1e3;
  record.eager_launch_bound = is_launch_bound(m.eager.median_ms, record.eager_kernel_ms);
  record.compiled_launch_bound = is_launch_bound(m.compiled.median_ms, record.compiled_kernel_ms);
  if (m.unstable) record.reason = m.note;
  if (const auto& first = record.unstable_beside_others) {
    record.reason = join_reasons(
        record.reason,
        fmt::format("timed again with the other pipelines paused: beside them the spread was "
                    "eager {:.1f}%, compiled {:.1f}% (speedup {:.3g})",
                    first->eager_spread * 100, first->compiled_spread * 100, first->speedup));
  }
  record.reason = join_reasons(record.reason, record.compiled_info.note);
}

}  // namespace

PerformanceRecord run_performance_experiment(const Manifest& manifest, Backend& eager_backend,
                                             Backend& compiled_backend, const BackendRequest& request,
                                             const std::vector<c10::IValue>& inputs,
                                             const PerformanceOptions& options) {
  PerformanceRecord record;
  Timing t{manifest, request, inputs, options, record, request.device, !manifest.mutated_inputs.empty()};
  if (t.device.is_cuda()) t.before_models = compat::cuda_allocated_bytes(t.device.index());
  bool prepared = false;
  {
    DeviceGate::Shared on_device(process_device_gate());
    prepared = prepare_eager(t, eager_backend) && prepare_compiled(t, compiled_backend) &&
               warm_up_compiled(t, compiled_backend.name());
  }
  if (prepared && measure(t)) summarize(t);
  // Not "performance: ..." any more (timed, failed or never prepared): a section that begins now
  // must not read this process as one at work beside it (timed_section.beside).
  crash_report::set_phase("after the performance experiment");
  return record;
}

}  // namespace zoobench
