// Joining result rows by model into accuracy columns and performance series.
#include "zoobench/report/joined_results.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "zoobench/report/number_format.h"
#include "zoobench/results/status.h"
#include "zoobench/util/text.h"

namespace zoobench::report {
namespace {

SeriesKey key_of(const ResultRow& row) {
  return {cell(row, columns::kDev), cell(row, columns::kMode), cell(row, columns::kDtype),
          cell(row, columns::kBackend)};
}

std::optional<double> ratio(std::optional<double> numerator, std::optional<double> denominator) {
  if (numerator && denominator) return *numerator / *denominator;
  return std::nullopt;
}

AccuracyCell accuracy_cell(const ResultRow& row) {
  AccuracyCell out;
  out.status = cell(row, columns::kAccuracy);
  for (const auto& [column, field] : accuracy_fields()) out.*field = read_number(row, *column);
  out.reason = cell(row, columns::kReason);
  return out;
}

PerformanceCell performance_cell(const ResultRow& row) {
  PerformanceCell out;
  for (const auto& [column, field] : performance_fields()) out.*field = read_number(row, *column);
  // Upstream rows carry no eager latency; it follows from the two upstream columns.
  if (!out.eager_ms && out.compiled_ms && out.speedup)
    out.eager_ms = *out.compiled_ms * *out.speedup;
  if (!out.op_speedup) out.op_speedup = ratio(out.eager_op_ms, out.compiled_op_ms);
  out.unstable = read_flag(row, columns::kUnstable);
  out.reason = cell(row, columns::kReason);
  out.eager_reference = cell(row, columns::kEagerReference);
  // Upstream's rows (no backend column) time the model's Python module as eager.
  if (out.eager_reference.empty() && cell(row, columns::kBackend).empty())
    out.eager_reference = "python";
  out.status = cell(row, columns::kStatus);
  if (out.status.empty()) {
    // Upstream's performance CSV marks a failed model only by a zero speedup.
    out.status = out.speedup ? "pass" : "fail_to_run";
    if (!out.speedup && out.reason.empty()) out.reason = "no speedup in the row (the run failed)";
  }
  return out;
}

bool same_accuracy(const AccuracyCell& a, const AccuracyCell& b) {
  return a.status == b.status && a.margin == b.margin && a.reason == b.reason;
}

bool same_performance(const PerformanceCell& a, const PerformanceCell& b) {
  return a.status == b.status && a.speedup == b.speedup && a.compiled_ms == b.compiled_ms &&
         a.eager_ms == b.eager_ms && a.op_speedup == b.op_speedup;
}

template <typename Key>
int index_of(std::vector<Key>& keys, const Key& key) {
  auto it = std::find(keys.begin(), keys.end(), key);
  if (it != keys.end()) return static_cast<int>(it - keys.begin());
  keys.push_back(key);
  return static_cast<int>(keys.size() - 1);
}

void add_distinct(std::vector<std::string>& values, const std::string& value) {
  if (!value.empty() && std::find(values.begin(), values.end(), value) == values.end()) {
    values.push_back(value);
  }
}

// Which of the key's fields take more than one value among `keys`.
struct Varying {
  bool dev = false, mode = false, dtype = false, backend = false;
};
Varying varying_fields(const std::vector<SeriesKey>& keys) {
  Varying out;
  for (const auto& key : keys) {
    out.dev = out.dev || key.dev != keys.front().dev;
    out.mode = out.mode || key.mode != keys.front().mode;
    out.dtype = out.dtype || key.dtype != keys.front().dtype;
    out.backend = out.backend || key.backend != keys.front().backend;
  }
  return out;
}

std::string join_nonempty(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) {
    if (part.empty()) continue;
    if (!out.empty()) out += '_';
    out += part;
  }
  return out;
}

}  // namespace

std::optional<double> read_number(const ResultRow& row, const columns::Column& column) {
  auto value = parse_number(cell(row, column));
  if (column.reading == columns::Reading::kPositive && !(value && *value > 0)) return std::nullopt;
  return value;
}

bool read_flag(const ResultRow& row, const columns::Column& column) {
  const std::string& value = cell(row, column);
  return value == "1" || value == "true" || value == "True";
}

const std::vector<AccuracyField>& accuracy_fields() {
  static const std::vector<AccuracyField> kFields = {{&columns::kMargin, &AccuracyCell::margin}};
  return kFields;
}

const std::vector<PerformanceField>& performance_fields() {
  static const std::vector<PerformanceField> kFields = {
      {&columns::kSpeedup, &PerformanceCell::speedup},
      {&columns::kAbsLatency, &PerformanceCell::compiled_ms},
      {&columns::kEagerLatency, &PerformanceCell::eager_ms},
      {&columns::kSpeedupCiLow, &PerformanceCell::speedup_ci_low},
      {&columns::kSpeedupCiHigh, &PerformanceCell::speedup_ci_high},
      {&columns::kEagerOpMs, &PerformanceCell::eager_op_ms},
      {&columns::kCompiledOpMs, &PerformanceCell::compiled_op_ms},
      {&columns::kOpSpeedup, &PerformanceCell::op_speedup},
      {&columns::kCompilationLatency, &PerformanceCell::compilation_latency_s},
      {&columns::kCompressionRatio, &PerformanceCell::compression_ratio}};
  return kFields;
}

bool SeriesKey::operator==(const SeriesKey& other) const {
  return dev == other.dev && mode == other.mode && dtype == other.dtype && backend == other.backend;
}

bool AccuracyCell::passed() const {
  auto parsed = parse_status(status);
  return parsed && is_passing(*parsed);
}

bool PerformanceCell::passed() const {
  auto parsed = parse_status(status);
  return parsed && is_passing(*parsed);
}

std::vector<std::string> JoinedResults::performance_contexts() const {
  std::vector<std::string> out;
  for (const auto& series : performance_series) {
    if (std::find(out.begin(), out.end(), series.context) == out.end())
      out.push_back(series.context);
  }
  return out;
}

std::string describe_run(const JoinedResults& joined) {
  std::vector<std::string> parts = {fmt::format("{} models", joined.models.size())};
  auto add = [&](const char* what, const std::vector<std::string>& values) {
    if (!values.empty()) parts.push_back(fmt::format("{}: {}", what, join(values, ", ")));
  };
  add("devices", joined.devices);
  add("mode", joined.modes);
  add("dtype", joined.dtypes);
  add("backends", joined.backends);
  return join(parts, " · ");
}

namespace {

// The unstable-row thresholds the performance rows were judged by (2.5% for rows that predate
// the column), each once.
std::vector<std::string> unstable_thresholds(const std::vector<ResultRow>& rows) {
  std::vector<std::string> thresholds;
  for (const auto& row : rows) {
    if (row.kind != ExperimentKind::kPerformance) continue;
    auto value = read_number(row, columns::kUnstableCov);
    add_distinct(thresholds, value ? format_percent(*value) : std::string("2.5%"));
  }
  return thresholds;
}

// The rows' cells before the models are built: the keys in order of first appearance and,
// per model, column/series index -> cell (the models' vectors are sized once all keys are known).
struct KeyedCells {
  std::vector<SeriesKey> accuracy_keys, performance_keys;
  std::map<std::string, std::map<int, AccuracyCell>> accuracy;
  std::map<std::string, std::map<int, PerformanceCell>> performance;
};

// A later row for the same model and key replaces the earlier one; a warning says so when the
// two differ, as the report shows only one.
void add_accuracy_row(const ResultRow& row, const std::string& name, const SeriesKey& key,
                      KeyedCells& cells, std::vector<std::string>& warnings) {
  int column = index_of(cells.accuracy_keys, key);
  AccuracyCell value = accuracy_cell(row);
  auto [it, inserted] = cells.accuracy[name].emplace(column, value);
  if (!inserted) {
    if (!same_accuracy(it->second, value)) {
      warnings.push_back(fmt::format(
          "two accuracy rows for {} with backend {} on {} ({} then {}): the later one is "
          "shown",
          name, key.backend.empty() ? "(none)" : key.backend,
          key.dev.empty() ? "the same device" : key.dev, it->second.status, value.status));
    }
    it->second = value;
  }
}

void add_performance_row(const ResultRow& row, const std::string& name, const SeriesKey& key,
                         KeyedCells& cells, std::vector<std::string>& warnings) {
  int series = index_of(cells.performance_keys, key);
  PerformanceCell value = performance_cell(row);
  auto [it, inserted] = cells.performance[name].emplace(series, value);
  if (!inserted) {
    if (!same_performance(it->second, value)) {
      warnings.push_back(fmt::format(
          "two performance rows for {} with backend {} on {}: the later one is shown", name,
          key.backend.empty() ? "(none)" : key.backend, key.dev.empty() ? "(none)" : key.dev));
    }
    it->second = value;
  }
}

// Every named row's cell by its model and key; the distinct devices, modes, dtypes and
// backends, and the warnings, go to `joined`.
KeyedCells collect_cells(const std::vector<ResultRow>& rows, JoinedResults& joined) {
  KeyedCells cells;
  for (const auto& row : rows) {
    const std::string& name = cell(row, columns::kName);
    if (name.empty()) {
      joined.warnings.push_back("a row without a model name was ignored");
      continue;
    }
    SeriesKey key = key_of(row);
    add_distinct(joined.devices, key.dev);
    add_distinct(joined.modes, key.mode);
    add_distinct(joined.dtypes, key.dtype);
    add_distinct(joined.backends, key.backend);
    if (row.kind == ExperimentKind::kAccuracy) {
      add_accuracy_row(row, name, key, cells, joined.warnings);
    } else {
      add_performance_row(row, name, key, cells, joined.warnings);
    }
  }
  return cells;
}

// Labels name only what varies among the keys, besides an accuracy column's device and a
// series' backend: a run of one device, mode and dtype keeps short headers.
void add_columns(const KeyedCells& cells, JoinedResults& joined) {
  Varying accuracy_varies = varying_fields(cells.accuracy_keys);
  for (const auto& key : cells.accuracy_keys) {
    joined.accuracy_columns.push_back(
        {key, join_nonempty({key.dev, accuracy_varies.backend ? key.backend : "",
                             accuracy_varies.mode ? key.mode : "",
                             accuracy_varies.dtype ? key.dtype : ""})});
  }
  Varying performance_varies = varying_fields(cells.performance_keys);
  for (const auto& key : cells.performance_keys) {
    std::string context = join_nonempty({performance_varies.dev ? key.dev : "",
                                         performance_varies.mode ? key.mode : "",
                                         performance_varies.dtype ? key.dtype : ""});
    std::string backend = key.backend.empty() ? "compiled" : key.backend;
    // The eager reference follows from the cells (add_eager_references).
    joined.performance_series.push_back({key, context, join_nonempty({context, backend}), ""});
  }
}

// Each series' eager reference: its cells' where they agree.
void add_eager_references(JoinedResults& joined) {
  for (std::size_t s = 0; s < joined.performance_series.size(); ++s) {
    std::vector<std::string> references;
    for (const auto& model : joined.models) {
      if (model.performance[s]) add_distinct(references, model.performance[s]->eager_reference);
    }
    joined.performance_series[s].eager_reference =
        references.size() > 1 ? kMixedEagerReferences
                              : (references.empty() ? "" : references.front());
  }
}

// One model per name, by name, with an empty cell where it has no row for a key.
void add_models(const KeyedCells& cells, JoinedResults& joined) {
  std::vector<std::string> names;
  for (const auto& [name, row_cells] : cells.accuracy) names.push_back(name);
  for (const auto& [name, row_cells] : cells.performance) {
    if (!cells.accuracy.count(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    JoinedModel model;
    model.name = name;
    model.accuracy.resize(cells.accuracy_keys.size());
    model.performance.resize(cells.performance_keys.size());
    if (auto it = cells.accuracy.find(name); it != cells.accuracy.end()) {
      for (const auto& [column, value] : it->second) model.accuracy[column] = value;
    }
    if (auto it = cells.performance.find(name); it != cells.performance.end()) {
      for (const auto& [series, value] : it->second) model.performance[series] = value;
    }
    joined.models.push_back(std::move(model));
  }
}

}  // namespace

JoinedResults join_results(const std::vector<ResultRow>& rows) {
  JoinedResults joined;
  joined.latency_matrices = build_latency_matrices(rows);
  const std::vector<std::string> thresholds = unstable_thresholds(rows);
  if (!thresholds.empty()) joined.unstable_threshold = join(thresholds, " or ");
  const KeyedCells cells = collect_cells(rows, joined);
  add_columns(cells, joined);
  add_models(cells, joined);
  add_eager_references(joined);
  return joined;
}

std::string eager_reference_name(const std::string& eager_reference) {
  if (eager_reference == "python") return "Python eager";
  if (eager_reference == "torchscript") return "TorchScript eager";
  if (eager_reference == kMixedEagerReferences) return "mixed eager references";
  return eager_reference.empty() ? "eager (reference not recorded)" : eager_reference + " eager";
}

std::string eager_reference_meaning(const std::string& eager_reference) {
  if (eager_reference == "python") return "the model's Python module";
  if (eager_reference == "torchscript") return "eval.pt in the TorchScript interpreter";
  if (eager_reference == kMixedEagerReferences)
    return "the Python module for some models and eval.pt in the TorchScript interpreter for "
           "others (see each row's eager_reference)";
  return eager_reference.empty() ? "not recorded (rows made before the eager_reference column)"
                                 : eager_reference;
}

std::string speedup_baseline(const PerformanceSeries& series) {
  return "vs " + eager_reference_name(series.eager_reference);
}

std::string speedup_baselines_sentence(const JoinedResults& joined) {
  std::vector<std::string> references;
  for (const auto& series : joined.performance_series)
    add_distinct(references, series.eager_reference.empty() ? "-" : series.eager_reference);
  if (references.empty()) return "";
  if (references.size() == 1) {
    const std::string& reference = joined.performance_series.front().eager_reference;
    if (reference.empty())
      return "Speedups are eager / compiled; the rows do not say which eager (they were made "
             "before the eager_reference column).";
    return "Speedups are eager / compiled, eager being " + eager_reference_meaning(reference) +
           " (eager_reference " + reference + ").";
  }
  std::vector<std::string> parts;
  for (const auto& series : joined.performance_series)
    parts.push_back(series.label + " against " + eager_reference_meaning(series.eager_reference));
  return "Speedups are eager / compiled: " + join(parts, "; ") + ".";
}

}  // namespace zoobench::report
