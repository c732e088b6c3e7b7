// Upstream's result files: see upstream_format.h.
#include "zoobench/results/upstream_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "zoobench/results/csv.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"

namespace zoobench {
namespace {

// common.py writes floats as f"{x:.6f}".
std::string upstream_float(const std::string& cell_text) {
  if (cell_text.empty()) return "0.000000";
  try {
    return fmt::format("{:.6f}", std::stod(cell_text));
  } catch (const std::exception&) {
    return "0.000000";
  }
}

// A counter of dynamo's, as upstream's Counter reads it where dynamo ran (a key it never counted
// is 0); an empty cell where nothing was measured: a backend outside the torch.compile family, a
// row that failed before dynamo compiled. Upstream's harness pads such rows with 0, which reads
// as "captured, no graph breaks"; its newer check_graph_breaks.py takes an absent cell as "not
// measured" and compares only what was (check_accuracy.py reads only name and accuracy).
std::string counter(const ResultRow& row, const std::string& key) {
  const auto stats = row.detail.find("dynamo_stats");
  if (stats == row.detail.end() || !stats->is_object()) return "";
  const auto value = stats->find(key);
  if (value == stats->end()) return "0";
  return value->is_number_integer() ? std::to_string(value->get<int64_t>()) : "";
}

void add_counters(const ResultRow& row, std::vector<std::string>& out) {
  for (const auto& key : upstream_dynamo_counters()) out.push_back(counter(row, key));
}

std::vector<std::string> accuracy_record(const ResultRow& row) {
  std::vector<std::string> out = {cell(row, columns::kDev), cell(row, columns::kName),
                                  cell(row, columns::kBatchSize), cell(row, columns::kAccuracy)};
  add_counters(row, out);
  const auto compile_s = row.detail.find("compile_s");
  // Empty, as the counters, where nothing was compiled.
  out.push_back(compile_s != row.detail.end() && compile_s->is_number()
                    ? fmt::format("{:.6f}", compile_s->get<double>())
                    : "");
  return out;
}

std::vector<std::string> performance_record(const ResultRow& row) {
  std::vector<std::string> out = {cell(row, columns::kDev), cell(row, columns::kName)};
  if (row.status() != Status::kPass || cell(row, columns::kPythonSpeedup).empty()) {
    out.insert(out.end(), {"0", "0.000000", "0.000000"});
    out.resize(upstream_columns(ExperimentKind::kPerformance).size(), "0");
    return out;
  }
  out.push_back(cell(row, columns::kBatchSize));
  for (const auto* column : {&columns::kPythonSpeedup, &columns::kAbsLatency,
                             &columns::kCompilationLatency, &columns::kCompressionRatio,
                             &columns::kEagerPeakMem, &columns::kDynamoPeakMem})
    out.push_back(upstream_float(cell(row, *column)));
  add_counters(row, out);
  return out;
}

}  // namespace

const std::vector<std::string>& upstream_dynamo_counters() {
  static const std::vector<std::string> kCounters = {
      "calls_captured",    "unique_graphs",     "fallbacks_to_eager", "graph_breaks",
      "unique_graph_breaks", "autograd_captures", "autograd_compiles",  "cudagraph_skips"};
  return kCounters;
}

const std::vector<std::string>& upstream_columns(ExperimentKind kind) {
  static const std::vector<std::string> kAccuracy = [] {
    std::vector<std::string> c = {"dev", "name", "batch_size", "accuracy"};
    c.insert(c.end(), upstream_dynamo_counters().begin(), upstream_dynamo_counters().end());
    c.push_back("compilation_latency");
    return c;
  }();
  static const std::vector<std::string> kPerformance = [] {
    std::vector<std::string> c = {"dev",         "name",           "batch_size",
                                  "speedup",     "abs_latency",    "compilation_latency",
                                  "compression_ratio", "eager_peak_mem", "dynamo_peak_mem"};
    c.insert(c.end(), upstream_dynamo_counters().begin(), upstream_dynamo_counters().end());
    return c;
  }();
  return kind == ExperimentKind::kAccuracy ? kAccuracy : kPerformance;
}

std::string upstream_file_name(const ResultRow& row) {
  std::string backend = cell(row, columns::kBackend);
  std::replace(backend.begin(), backend.end(), ':', '-');
  std::string device = cell(row, columns::kDev);
  device = device.substr(0, device.find(':'));
  return fmt::format("{}_{}_{}_{}_{}_{}.csv", backend, cell(row, columns::kSuite),
                     cell(row, columns::kDtype), cell(row, columns::kMode), device,
                     std::string(experiment_name(row.kind)));
}

std::vector<std::string> upstream_record(const ResultRow& row) {
  return row.kind == ExperimentKind::kAccuracy ? accuracy_record(row) : performance_record(row);
}

UpstreamSink::UpstreamSink(ExperimentKind kind, std::string path)
    : kind_(kind), path_(std::move(path)) {
  if (!std::filesystem::exists(path_) || std::filesystem::file_size(path_) == 0) return;
  const std::vector<CsvRecord> records = split_csv_records(read_text_file(path_));
  if (records.empty()) return;
  started_empty_ = false;
  if (records.front().cells != upstream_columns(kind_))
    throw UsageError(path_ + " holds other columns than upstream's " +
                     std::string(experiment_name(kind_)) +
                     " file: move it away, or write to another --output-directory");
  for (std::size_t i = 1; i < records.size(); ++i) records_.push_back(records[i].cells);
}

void UpstreamSink::write(const ResultRow& row) { write(std::vector<ResultRow>{row}); }

void UpstreamSink::write(const std::vector<ResultRow>& rows) {
  for (const auto& row : rows) records_.push_back(upstream_record(row));
  std::string text = csv_line(upstream_columns(kind_));
  for (const auto& record : records_) text += csv_line(record);
  write_file_atomically(path_, text);
}

}  // namespace zoobench
