// Building the latency matrices from result rows.
#include "zoobench/report/latency_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "zoobench/report/number_format.h"
#include "zoobench/results/status.h"

namespace zoobench::report {
namespace {

using MatrixKey =
    std::tuple<std::string, std::string, std::string, std::string>;  // suite, dev, mode, dtype

// Rows of one run with a worker per GPU say cuda:0 or cuda:1: one matrix per device type (the
// workers' GPUs are alike), not per GPU.
MatrixKey key_of(const ResultRow& row) {
  const std::string& dev = cell(row, columns::kDev);
  return {cell(row, columns::kSuite), dev.substr(0, dev.find(':')), cell(row, columns::kMode),
          cell(row, columns::kDtype)};
}

// Rows written before the column existed come from zoobench's own backends.
std::string family_of(const ResultRow& row) {
  const std::string& family = cell(row, columns::kBackendFamily);
  return family.empty() ? "zoobench" : family;
}

std::size_t column_of(LatencyMatrix& matrix, const std::string& backend,
                      const std::string& family) {
  auto it = std::find(matrix.backends.begin(), matrix.backends.end(), backend);
  if (it != matrix.backends.end()) return static_cast<std::size_t>(it - matrix.backends.begin());
  matrix.backends.push_back(backend);
  matrix.families.push_back(family);
  return matrix.backends.size() - 1;
}

// The column of the fastest usable result (a passing performance row whose accuracy did not
// fail), of one family or, with "", of any.
std::optional<std::size_t> fastest_of(const LatencyMatrix& matrix, const MatrixRow& row,
                                      const std::string& family) {
  std::optional<std::size_t> fastest;
  for (std::size_t b = 0; b < row.cells.size(); ++b) {
    const MatrixCell& c = row.cells[b];
    if (!family.empty() && matrix.families[b] != family) continue;
    if (!c.latency_ms || c.accuracy_failed()) continue;
    if (!fastest || *c.latency_ms < *row.cells[*fastest].latency_ms) fastest = b;
  }
  return fastest;
}

// The best speedup over the process's own eager reference among the family's usable results
// (a passing performance row whose accuracy did not fail).
std::optional<double> best_speedup_of(const LatencyMatrix& matrix, const MatrixRow& row,
                                      const std::string& family) {
  std::optional<double> best;
  for (std::size_t b = 0; b < row.cells.size(); ++b) {
    const MatrixCell& c = row.cells[b];
    if (matrix.families[b] != family || !c.latency_ms || !c.speedup || c.accuracy_failed())
      continue;
    if (!best || *c.speedup > *best) best = c.speedup;
  }
  return best;
}

// Whether every zoobench and torch.compile backend of the matrix has a performance row for the
// model (passing or not): otherwise "the best" would be the best of the backends run so far.
bool has_every_compared_row(const LatencyMatrix& matrix, const MatrixRow& row) {
  for (std::size_t b = 0; b < row.cells.size(); ++b) {
    if (matrix.families[b] != "python" && row.cells[b].status.empty()) return false;
  }
  return true;
}

std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

// Columns in reading order: the uncompiled Python baseline, zoobench's backends, then
// torch.compile's; within a family, in order of first appearance.
void order_columns(LatencyMatrix& matrix) {
  auto rank = [](const std::string& family) {
    return family == "python" ? 0 : family == "zoobench" ? 1 : 2;
  };
  std::vector<std::size_t> order(matrix.backends.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return rank(matrix.families[a]) < rank(matrix.families[b]);
  });
  auto permuted = [&](const auto& values) {
    std::decay_t<decltype(values)> out;
    for (std::size_t i : order) out.push_back(values[i]);
    return out;
  };
  matrix.backends = permuted(matrix.backends);
  matrix.families = permuted(matrix.families);
  for (MatrixRow& row : matrix.rows) {
    row.cells.resize(order.size());
    row.cells = permuted(row.cells);
  }
}

void complete(LatencyMatrix& matrix) {
  order_columns(matrix);
  std::vector<std::vector<double>> ratios(matrix.backends.size());
  std::vector<double> best_ratios, per_eager_ratios, kernel_ratios;
  for (MatrixRow& row : matrix.rows) {
    row.cells.resize(matrix.backends.size());
    row.fastest = fastest_of(matrix, row, "");
    if (!has_every_compared_row(matrix, row)) {
      matrix.incomplete++;
      continue;
    }
    // The two backends every ratio of the row compares: each family's fastest by latency.
    const auto reference_column = fastest_of(matrix, row, "torch.compile");
    const auto own_column = fastest_of(matrix, row, "zoobench");
    const MatrixCell* reference_cell = reference_column ? &row.cells[*reference_column] : nullptr;
    const MatrixCell* own_cell = own_column ? &row.cells[*own_column] : nullptr;
    auto reference = reference_cell ? reference_cell->latency_ms : std::nullopt;
    auto own = own_cell ? own_cell->latency_ms : std::nullopt;
    if (reference && own) {
      row.zoobench_vs_torch_compile = *own / *reference;
      best_ratios.push_back(*row.zoobench_vs_torch_compile);
      matrix.compared++;
      if (*own <= *reference) matrix.zoobench_at_or_below++;
      auto reference_speedup = best_speedup_of(matrix, row, "torch.compile");
      auto own_speedup = best_speedup_of(matrix, row, "zoobench");
      if (reference_speedup && own_speedup) {
        row.zoobench_vs_torch_compile_per_eager = *reference_speedup / *own_speedup;
        per_eager_ratios.push_back(*row.zoobench_vs_torch_compile_per_eager);
      }
      // Their kernel times, where both rows measured them.
      if (reference_cell->kernel_ms && own_cell->kernel_ms) {
        row.zoobench_vs_torch_compile_kernels = *own_cell->kernel_ms / *reference_cell->kernel_ms;
        kernel_ratios.push_back(*row.zoobench_vs_torch_compile_kernels);
      }
    }
    if (!reference) continue;
    for (std::size_t b = 0; b < row.cells.size(); ++b) {
      if (row.cells[b].latency_ms && !row.cells[b].accuracy_failed())
        ratios[b].push_back(*row.cells[b].latency_ms / *reference);
    }
  }
  for (const auto& values : ratios) matrix.geomean_vs_torch_compile.push_back(geomean(values));
  matrix.geomean_zoobench_vs_torch_compile = geomean(best_ratios);
  matrix.geomean_zoobench_vs_torch_compile_per_eager = geomean(per_eager_ratios);
  matrix.geomean_zoobench_vs_torch_compile_kernels = geomean(kernel_ratios);
}

}  // namespace

bool MatrixCell::accuracy_failed() const {
  if (accuracy.empty()) return false;
  auto status = parse_status(accuracy);
  return !status || !is_passing(*status);
}

std::string LatencyMatrix::title() const {
  std::string out;
  for (const std::string* part : {&suite, &dev, &mode, &dtype}) {
    if (part->empty()) continue;
    if (!out.empty()) out += " \u00b7 ";
    out += *part;
  }
  return out;
}

std::string LatencyMatrix::comparison_sentence() const {
  std::string out = fmt::format(
      "zoobench's fastest backend at or below torch.compile's fastest on {} of {} models "
      "(geomean latency ratio {}; per eager {}; kernel time {}).",
      zoobench_at_or_below, compared, format_ratio(geomean_zoobench_vs_torch_compile),
      format_ratio(geomean_zoobench_vs_torch_compile_per_eager),
      format_ratio(geomean_zoobench_vs_torch_compile_kernels));
  if (incomplete > 0) {
    out += fmt::format(" {} model{} not compared: a backend's performance row is missing.",
                       incomplete, incomplete == 1 ? "" : "s");
  }
  return out;
}

bool LatencyMatrix::compares_with_torch_compile() const { return compared + incomplete > 0; }

std::vector<LatencyMatrix> build_latency_matrices(const std::vector<ResultRow>& rows) {
  std::map<MatrixKey, LatencyMatrix> matrices;
  std::vector<MatrixKey> order;
  std::map<MatrixKey, std::map<std::string, MatrixRow>> by_model;
  auto matrix_for = [&](const ResultRow& row) -> LatencyMatrix& {
    MatrixKey key = key_of(row);
    if (!matrices.count(key)) {
      order.push_back(key);
      LatencyMatrix matrix;
      std::tie(matrix.suite, matrix.dev, matrix.mode, matrix.dtype) = key;
      matrices[key] = std::move(matrix);
    }
    return matrices[key];
  };
  // Performance rows make the columns; accuracy rows only mark cells.
  for (const auto& row : rows) {
    if (row.kind != ExperimentKind::kPerformance) continue;
    LatencyMatrix& matrix = matrix_for(row);
    std::size_t b = column_of(matrix, cell(row, columns::kBackend), family_of(row));
    MatrixRow& model = by_model[key_of(row)][cell(row, columns::kName)];
    model.model = cell(row, columns::kName);
    if (model.cells.size() <= b) model.cells.resize(b + 1);
    model.cells[b].status = cell(row, columns::kStatus);
    auto latency = parse_number(cell(row, columns::kAbsLatency));
    if (model.cells[b].status == "pass" && latency && *latency > 0) {
      model.cells[b].latency_ms = latency;
      model.cells[b].unstable = cell(row, columns::kUnstable) == "1";
      auto speedup = parse_number(cell(row, columns::kSpeedup));
      if (speedup && *speedup > 0) model.cells[b].speedup = speedup;
      auto kernels = parse_number(cell(row, columns::kCompiledOpMs));
      if (kernels && *kernels > 0) model.cells[b].kernel_ms = kernels;
    }
  }
  for (const auto& row : rows) {
    if (row.kind != ExperimentKind::kAccuracy || !matrices.count(key_of(row))) continue;
    LatencyMatrix& matrix = matrices[key_of(row)];
    auto it =
        std::find(matrix.backends.begin(), matrix.backends.end(), cell(row, columns::kBackend));
    if (it == matrix.backends.end()) continue;
    MatrixRow& model = by_model[key_of(row)][cell(row, columns::kName)];
    model.model = cell(row, columns::kName);
    const std::size_t b = static_cast<std::size_t>(it - matrix.backends.begin());
    if (model.cells.size() <= b) model.cells.resize(b + 1);
    model.cells[b].accuracy = cell(row, columns::kAccuracy);
  }
  std::vector<LatencyMatrix> out;
  for (const auto& key : order) {
    LatencyMatrix& matrix = matrices[key];
    if (matrix.backends.size() < 2) continue;
    for (auto& [name, row] : by_model[key]) matrix.rows.push_back(std::move(row));
    complete(matrix);
    out.push_back(std::move(matrix));
  }
  return out;
}

}  // namespace zoobench::report
