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
  row.cells = {{"dev", c.device},     {"name", c.name},  {"batch_size", std::to_string(c.batch_size)},
               {"backend", c.backend}, {"mode", c.mode}, {"dtype", c.dtype},
               {"patches", join(c.patches, ";")}, {"log", c.log}, {"suite", c.suite},
               {"backend_family", c.backend_family}};
  if (kind == ExperimentKind::kAccuracy) row.cells["input_layout"] = c.input_layout;
  return row;
}

// dynamo's counts, for the rows of the torch.compile family (empty for other backends).
void add_compile_counts(ResultRow& row, const ExecutionInfo& info) {
  auto count = [](std::optional<int64_t> value) { return value ? std::to_string(*value) : std::string(); };
  row.cells["graphs"] = count(info.graphs);
  row.cells["graph_breaks"] = count(info.graph_breaks);
  row.cells["recompiles"] = count(info.recompiles);
}

std::optional<double> gb(std::optional<int64_t> bytes) {
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes) / kBytesPerGb;
}

}  // namespace

ResultRow accuracy_row(const AccuracyRecord& r, const RowContext& context) {
  ResultRow row = base_row(ExperimentKind::kAccuracy, context);
  row.set_status(r.status);
  row.cells["tolerance"] = format_cell(r.tolerance.tolerance);
  row.cells["cosine"] = r.tolerance.cosine ? "1" : "0";
  row.cells["tolerance_source"] = r.tolerance.source;
  row.cells["max_abs"] = format_cell(r.max_abs);
  row.cells["mean_abs"] = format_cell(r.mean_abs);
  row.cells["rmse_res"] = format_cell(r.rmse_res);
  row.cells["rmse_ref"] = format_cell(r.rmse_ref);
  row.cells["margin"] = format_cell(r.margin);
  row.cells["worst_tensor"] = r.worst_tensor;
  row.cells["failed_tensors"] = r.total_tensors ? std::to_string(r.failed_tensors) : "";
  row.cells["total_tensors"] = r.total_tensors ? std::to_string(r.total_tensors) : "";
  row.cells["min_passing_tol"] = format_cell(r.min_passing_tol);
  row.cells["cudagraphs"] = r.compiled_info.cudagraphs;
  row.cells["reason"] = r.reason;
  row.cells["duration_s"] = format_cell(r.duration_s);
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
  return c;
}

ResultRow performance_row(const PerformanceRecord& r, const RowContext& context) {
  ResultRow row = base_row(ExperimentKind::kPerformance, context);
  row.set_status(r.status);
  row.cells["reason"] = r.reason;
  row.cells["cudagraphs"] = r.compiled_info.cudagraphs;
  add_compile_counts(row, r.compiled_info);
  if (r.status != Status::kPass) {
    row.cells["speedup"] = "0";  // upstream writes 0 for a model that did not run
    return row;
  }
  const auto& m = r.measurement;
  row.cells["speedup"] = format_cell(m.speedup);
  row.cells["abs_latency"] = format_cell(m.compiled.median_ms);
  row.cells["compilation_latency"] = format_cell(r.compilation_latency_s);
  auto eager_gb = gb(r.eager_peak_bytes), compiled_gb = gb(r.compiled_peak_bytes);
  row.cells["eager_peak_mem"] = format_cell(eager_gb);
  row.cells["dynamo_peak_mem"] = format_cell(compiled_gb);
  if (eager_gb && compiled_gb && *compiled_gb > 0) row.cells["compression_ratio"] = format_cell(*eager_gb / *compiled_gb);
  row.cells["eager_latency"] = format_cell(m.eager.median_ms);
  row.cells["speedup_ci_low"] = format_cell(m.speedup_ci_low);
  row.cells["speedup_ci_high"] = format_cell(m.speedup_ci_high);
  row.cells["cov_eager"] = format_cell(m.eager.cov);
  row.cells["cov_compiled"] = format_cell(m.compiled.cov);
  row.cells["eager_op_ms"] = format_cell(r.eager_kernel_ms);
  row.cells["compiled_op_ms"] = format_cell(r.compiled_kernel_ms);
  if (r.eager_kernel_ms && r.compiled_kernel_ms && *r.compiled_kernel_ms > 0) {
    row.cells["op_speedup"] = format_cell(*r.eager_kernel_ms / *r.compiled_kernel_ms);
  }
  row.cells["unstable"] = m.unstable ? "1" : "0";
  row.cells["iterations_per_run"] = std::to_string(m.iterations_per_run);
  row.cells["repeat"] = std::to_string(m.eager.samples_ms.size());
  row.cells["eager_min"] = format_cell(m.eager.min_ms);
  row.cells["eager_p10"] = format_cell(m.eager.p10_ms);
  row.cells["eager_p90"] = format_cell(m.eager.p90_ms);
  row.cells["compiled_min"] = format_cell(m.compiled.min_ms);
  row.cells["compiled_p10"] = format_cell(m.compiled.p10_ms);
  row.cells["compiled_p90"] = format_cell(m.compiled.p90_ms);
  std::string launch_bound = r.eager_launch_bound && r.compiled_launch_bound ? "both"
                             : r.eager_launch_bound                          ? "eager"
                             : r.compiled_launch_bound                       ? "compiled"
                                                                             : "";
  row.cells["launch_bound"] = launch_bound;
  if (m.uncompiled) {
    row.cells["python_eager_latency"] = format_cell(m.uncompiled->median_ms);
    row.cells["python_speedup"] = format_cell(m.uncompiled->median_ms / m.compiled.median_ms);
    row.detail["python_eager_samples_ms"] = m.uncompiled->samples_ms;
  }
  row.cells["unstable_cov"] = format_cell(m.unstable_cov);
  row.detail["eager_samples_ms"] = m.eager.samples_ms;
  row.detail["compiled_samples_ms"] = m.compiled.samples_ms;
  row.detail["settle_iterations"] = m.settle_iterations;
  // Where the samples were taken: the measuring process's CPUs (--cpu-affinity, taskset).
  row.detail["cpu_affinity"] = format_cpu_list(current_cpu_affinity());
  row.detail["eager_first_iteration_ms"] = m.eager.first_iteration_ms;
  row.detail["compiled_first_iteration_ms"] = m.compiled.first_iteration_ms;
  if (m.eager.device_median_ms) row.detail["eager_event_ms"] = *m.eager.device_median_ms;
  if (m.compiled.device_median_ms) row.detail["compiled_event_ms"] = *m.compiled.device_median_ms;
  return row;
}

ResultRow failure_row(ExperimentKind kind, Status status, const std::string& reason, const RowContext& context) {
  ResultRow row = base_row(kind, context);
  row.set_status(status);
  row.cells["reason"] = reason;
  if (kind == ExperimentKind::kPerformance) row.cells["speedup"] = "0";
  return row;
}

}  // namespace zoobench
