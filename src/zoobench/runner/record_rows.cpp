// Column mapping of accuracy and performance records.
#include "zoobench/runner/record_rows.h"

#include "zoobench/util/cpu_affinity.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

constexpr double kBytesPerGb = 1e9;

ResultRow base_row(ExperimentKind kind, const RowContext& c) {
  ResultRow row;
  row.kind = kind;
  set_cell(row, columns::kDev, c.device);
  set_cell(row, columns::kName, c.name);
  set_cell(row, columns::kBatchSize, std::to_string(c.batch_size));
  set_cell(row, columns::kBackend, c.backend);
  set_cell(row, columns::kMode, c.mode);
  set_cell(row, columns::kDtype, c.dtype);
  set_cell(row, columns::kPatches, join(c.patches, ";"));
  set_cell(row, columns::kLog, c.log);
  set_cell(row, columns::kSuite, c.suite);
  set_cell(row, columns::kBackendFamily, c.backend_family);
  set_cell(row, columns::kSwitchesOff, join(c.switches_off, ";"));
  set_cell(row, columns::kEagerReference, c.eager_reference);
  if (kind == ExperimentKind::kAccuracy) set_cell(row, columns::kInputLayout, c.input_layout);
  return row;
}

// dynamo's counts, for the rows of the torch.compile family (empty for other backends).
void add_compile_counts(ResultRow& row, const ExecutionInfo& info) {
  auto count = [](std::optional<int64_t> value) {
    return value ? std::to_string(*value) : std::string();
  };
  set_cell(row, columns::kGraphs, count(info.graphs));
  set_cell(row, columns::kGraphBreaks, count(info.graph_breaks));
  set_cell(row, columns::kRecompiles, count(info.recompiles));
  if (!info.dynamo_stats.empty()) row.detail["dynamo_stats"] = info.dynamo_stats;
  if (!info.graph_break_reasons.empty())
    row.detail["graph_break_reasons"] = info.graph_break_reasons;
  if (!info.frames_not_converted.empty())
    row.detail["frames_not_converted"] = info.frames_not_converted;
  if (info.compile_seconds) row.detail["compile_s"] = *info.compile_seconds;
  if (!info.compile_phases.empty()) row.detail["dynamo_compile_s"] = info.compile_phases;
}

// [{"name", "ms", "calls"}, ...]: per iteration, the largest first (docs/formats.md).
nlohmann::json kernel_listing(const std::vector<KernelShare>& kernels) {
  nlohmann::json listing = nlohmann::json::array();
  for (const auto& kernel : kernels) {
    listing.push_back({{"name", kernel.name}, {"ms", kernel.ms}, {"calls", kernel.calls}});
  }
  return listing;
}

std::optional<double> gb(std::optional<int64_t> bytes) {
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes) / kBytesPerGb;
}

}  // namespace

ResultRow accuracy_row(const AccuracyRecord& r, const RowContext& context) {
  ResultRow row = base_row(ExperimentKind::kAccuracy, context);
  row.set_status(r.status);
  set_cell(row, columns::kTolerance, format_cell(r.tolerance.tolerance));
  set_cell(row, columns::kCosine, r.tolerance.cosine ? "1" : "0");
  set_cell(row, columns::kToleranceSource, r.tolerance.source);
  set_cell(row, columns::kMaxAbs, format_cell(r.max_abs));
  set_cell(row, columns::kMeanAbs, format_cell(r.mean_abs));
  set_cell(row, columns::kRmseRes, format_cell(r.rmse_res));
  set_cell(row, columns::kRmseRef, format_cell(r.rmse_ref));
  set_cell(row, columns::kMargin, format_cell(r.margin));
  set_cell(row, columns::kWorstTensor, r.worst_tensor);
  set_cell(row, columns::kFailedTensors, r.total_tensors ? std::to_string(r.failed_tensors) : "");
  set_cell(row, columns::kTotalTensors, r.total_tensors ? std::to_string(r.total_tensors) : "");
  set_cell(row, columns::kMinPassingTol, format_cell(r.min_passing_tol));
  set_cell(row, columns::kCudagraphs, r.compiled_info.cudagraphs);
  set_cell(row, columns::kReason, r.reason);
  set_cell(row, columns::kDurationS, format_cell(r.duration_s));
  if (r.strict_status) set_cell(row, columns::kStrictAccuracy, std::string(status_name(*r.strict_status)));
  add_compile_counts(row, r.compiled_info);
  row.detail["tensors"] = r.tensors;
  row.detail["fp64_available"] = r.fp64_available;
  row.detail["check_runs"] = r.check_runs;
  if (!r.summary_text.empty()) row.detail["summary"] = r.summary_text;
  return row;
}

RowContext row_context(const RunOptions& options, const ZooEntry& model, const std::string& device,
                       const std::string& log) {
  RowContext c;
  c.device = device;
  c.name = model.name;
  c.suite = model.suite;
  c.backend_family = make_backend(options.backend)->family();
  c.backend = options.backend;
  c.mode = mode_name(options.mode);
  c.dtype = precision_name(options.precision);
  c.log = log;
  c.eager_reference = eager_reference(options);
  return c;
}

ResultRow performance_row(const PerformanceRecord& r, const RowContext& context) {
  ResultRow row = base_row(ExperimentKind::kPerformance, context);
  row.set_status(r.status);
  set_cell(row, columns::kReason, r.reason);
  set_cell(row, columns::kCudagraphs, r.compiled_info.cudagraphs);
  add_compile_counts(row, r.compiled_info);
  if (r.status != Status::kPass) {
    set_cell(row, columns::kSpeedup, "0");  // upstream writes 0 for a model that did not run
    return row;
  }
  const auto& m = r.measurement;
  set_cell(row, columns::kSpeedup, format_cell(m.speedup));
  // Each side's statistics (median, min, p10, p90, cov) in their columns.
  for (const SideStatistic& registered : side_statistics()) {
    set_cell(row, *registered.eager_column, format_cell(m.eager.*registered.field));
    set_cell(row, *registered.compiled_column, format_cell(m.compiled.*registered.field));
  }
  set_cell(row, columns::kCompilationLatency, format_cell(r.compilation_latency_s));
  auto eager_gb = gb(r.eager_peak_bytes), compiled_gb = gb(r.compiled_peak_bytes);
  set_cell(row, columns::kEagerPeakMem, format_cell(eager_gb));
  set_cell(row, columns::kDynamoPeakMem, format_cell(compiled_gb));
  if (eager_gb && compiled_gb && *compiled_gb > 0)
    set_cell(row, columns::kCompressionRatio, format_cell(*eager_gb / *compiled_gb));
  set_cell(row, columns::kSpeedupCiLow, format_cell(m.speedup_ci_low));
  set_cell(row, columns::kSpeedupCiHigh, format_cell(m.speedup_ci_high));
  set_cell(row, columns::kEagerOpMs, format_cell(r.eager_kernel_ms));
  set_cell(row, columns::kCompiledOpMs, format_cell(r.compiled_kernel_ms));
  if (r.eager_kernel_ms && r.compiled_kernel_ms && *r.compiled_kernel_ms > 0) {
    set_cell(row, columns::kOpSpeedup, format_cell(*r.eager_kernel_ms / *r.compiled_kernel_ms));
  }
  set_cell(row, columns::kUnstable, m.unstable ? "1" : "0");
  set_cell(row, columns::kIterationsPerRun, std::to_string(m.iterations_per_run));
  set_cell(row, columns::kRepeat, std::to_string(m.eager.samples_ms.size()));
  std::string launch_bound = r.eager_launch_bound && r.compiled_launch_bound ? "both"
                             : r.eager_launch_bound                          ? "eager"
                             : r.compiled_launch_bound                       ? "compiled"
                                                                             : "";
  set_cell(row, columns::kLaunchBound, launch_bound);
  if (m.uncompiled) {
    set_cell(row, columns::kPythonEagerLatency, format_cell(m.uncompiled->median_ms));
    set_cell(row, columns::kPythonSpeedup,
             format_cell(m.uncompiled->median_ms / m.compiled.median_ms));
    row.detail["python_eager_samples_ms"] = m.uncompiled->samples_ms;
  } else if (context.eager_reference == "python") {
    // Eager is the Python module itself: upstream's speedup is the row's own.
    set_cell(row, columns::kPythonEagerLatency, format_cell(m.eager.median_ms));
    set_cell(row, columns::kPythonSpeedup, format_cell(m.speedup));
  }
  if (r.timed_section) {
    row.detail["timed_section"] = {{"from", r.timed_section->from_s},
                                   {"to", r.timed_section->to_s},
                                   {"beside", r.beside_timing},
                                   {"paused", r.paused_for_timing},
                                   {"pause_ended_early", r.pause_ended_early}};
    if (r.op_launch_us) row.detail["timed_section"]["op_launch_us"] = *r.op_launch_us;
    if (const auto& first = r.unstable_beside_others) {
      row.detail["timed_section"]["unstable_beside_others"] = {
          {"eager_spread", first->eager_spread},
          {"compiled_spread", first->compiled_spread},
          {"speedup", first->speedup}};
    }
    if (r.cublas_workspace_config)
      row.detail["timed_section"]["cublas_workspace_config"] = *r.cublas_workspace_config;
  }
  set_cell(row, columns::kUnstableCov, format_cell(m.unstable_cov));
  row.detail["eager_samples_ms"] = m.eager.samples_ms;
  row.detail["compiled_samples_ms"] = m.compiled.samples_ms;
  row.detail["settle_iterations"] = m.settle_iterations;
  // Where the samples were taken: the measuring process's CPUs (--cpu-affinity, taskset).
  row.detail["cpu_affinity"] = format_cpu_list(current_cpu_affinity());
  row.detail["eager_first_iteration_ms"] = m.eager.first_iteration_ms;
  row.detail["compiled_first_iteration_ms"] = m.compiled.first_iteration_ms;
  if (m.eager.device_median_ms) row.detail["eager_event_ms"] = *m.eager.device_median_ms;
  if (m.compiled.device_median_ms) row.detail["compiled_event_ms"] = *m.compiled.device_median_ms;
  if (!r.eager_kernels.empty()) row.detail["eager_kernels"] = kernel_listing(r.eager_kernels);
  if (!r.compiled_kernels.empty()) row.detail["compiled_kernels"] = kernel_listing(r.compiled_kernels);
  return row;
}

ResultRow failure_row(ExperimentKind kind, Status status, const std::string& reason,
                      const RowContext& context) {
  ResultRow row = base_row(kind, context);
  row.set_status(status);
  set_cell(row, columns::kReason, reason);
  if (kind == ExperimentKind::kPerformance) set_cell(row, columns::kSpeedup, "0");
  return row;
}

}  // namespace zoobench
