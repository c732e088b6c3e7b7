#include "zoobench/runner/run_summary.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "zoobench/perf/statistics.h"
#include "zoobench/report/number_format.h"

namespace zoobench {
namespace {

constexpr std::size_t kModelsNamed = 5;  // per failure status and for the unstable rows

BackendTally& tally_for(RunTally& tally, const std::string& backend) {
  for (auto& entry : tally.backends)
    if (entry.backend == backend) return entry;
  tally.backends.emplace_back();
  tally.backends.back().backend = backend;
  return tally.backends.back();
}

struct LoadAverage {
  double load = 0;
  long cpus = 0;
};
std::optional<LoadAverage> load_average() {
  double load[1] = {0};
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (::getloadavg(load, 1) != 1 || cpus <= 0) return std::nullopt;
  return LoadAverage{load[0], cpus};
}

std::string spread_text(double speedup, double low, double high) {
  return fmt::format("\u00b1{:.0f}%", 50.0 * (high - low) / speedup);
}

std::string load_text(const LoadAverage& average) {
  return fmt::format("load average {:.1f} over the last minute on {} CPU(s)", average.load,
                     average.cpus);
}

void add_performance_row(BackendTally& backend, RunTally& tally, const ResultRow& row) {
  if (const auto section = row.detail.find("timed_section"); section != row.detail.end()) {
    if (section->contains("op_launch_us"))
      tally.op_launch_us.push_back(section->at("op_launch_us").get<double>());
    if (section->contains("cublas_workspace_config")) tally.timed_with_cublas_workspace_config++;
    if (section->contains("unstable_beside_others")) {
      tally.retimed_models.push_back(cell(row, columns::kName));
      if (cell(row, columns::kUnstable) != "1") tally.retimed_stable++;
    }
  }
  const auto speedup = report::parse_number(cell(row, columns::kSpeedup));
  if (!speedup || *speedup <= 0) return;
  backend.timed++;
  backend.speedups.push_back(*speedup);
  const auto low = report::parse_number(cell(row, columns::kSpeedupCiLow));
  const auto high = report::parse_number(cell(row, columns::kSpeedupCiHigh));
  const bool has_interval = low && high && *low > 0 && *high >= *low;
  if (has_interval) backend.intervals.emplace_back(*low, *high);
  if (cell(row, columns::kUnstable) != "1") return;
  backend.unstable++;
  tally.unstable_models.push_back(cell(row, columns::kName) + " (" + backend.backend +
                                  (has_interval ? ", " + spread_text(*speedup, *low, *high) : "") +
                                  ")");
}

// "a, b, c, d, e and 3 more"
std::string some_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kModelsNamed; ++i)
    out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kModelsNamed) out += fmt::format(" and {} more", names.size() - kModelsNamed);
  return out;
}

std::string accuracy_text(const BackendTally& backend) {
  if (backend.accuracy_rows == 0) return "-";
  return fmt::format("{}/{} ({:.0f}%)", backend.accuracy_passed, backend.accuracy_rows,
                     100.0 * backend.accuracy_passed / backend.accuracy_rows);
}

std::string speedup_text(const BackendTally& backend) {
  const auto geomean = geomean_speedup(backend);
  if (!geomean) return "-";
  if (!geomean->band) return report::format_speedup(geomean->value);
  const auto [low, high] = *geomean->band;
  return fmt::format("{} [{}]", report::format_speedup(geomean->value, low, high),
                     report::format_speedup_interval(geomean->value, low, high, "x", ", "));
}

void print_backend_table(const RunTally& tally, std::FILE* out) {
  std::vector<std::vector<std::string>> lines = {
      {"backend", "accuracy", "geomean speedup [band]", "timed", "unstable", "failed"}};
  for (const auto& backend : tally.backends)
    lines.push_back({backend.backend, accuracy_text(backend), speedup_text(backend),
                     std::to_string(backend.timed), std::to_string(backend.unstable),
                     std::to_string(backend.failed)});
  std::vector<std::size_t> widths(lines[0].size(), 0);
  for (const auto& line : lines)
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  for (const auto& line : lines) {
    std::string text = " ";
    for (std::size_t i = 0; i < line.size(); ++i)
      text += fmt::format(" {:<{}} ", line[i], widths[i]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    std::fprintf(out, "%s\n", text.c_str());
  }
}

// The load over the last minute against the CPUs (the run's own model process counts as one),
// and what a small op cost the host where the timings began: a launch-bound eager side is as
// fast as that, so runs on two machines compare only where it is alike.
void print_host_load(const RunTally& tally, std::FILE* out) {
  const auto average = load_average();
  std::string line = average ? load_text(*average) : "load average unknown";
  if (average && average->load > static_cast<double>(average->cpus))
    line += ": busier than its CPUs, so latencies may read slow and spread wide";
  if (!tally.op_launch_us.empty()) {
    const auto [low, high] =
        std::minmax_element(tally.op_launch_us.begin(), tally.op_launch_us.end());
    line += fmt::format(
        "; a small op cost {:.1f} us on the device (median of the timings; {:.1f} "
        "to {:.1f})",
        stats::median(tally.op_launch_us), *low, *high);
  }
  if (tally.timed_with_cublas_workspace_config > 0)
    line += fmt::format(
        "; {} timing(s) ran with CUBLAS_WORKSPACE_CONFIG set, which PyTorch parses on every "
        "cuBLAS call: eager sides of many small matmuls read slow (upstream's timings run "
        "without it; unset it to time)",
        tally.timed_with_cublas_workspace_config);
  std::fprintf(out, "  host: %s\n", line.c_str());
}

}  // namespace

std::string speedup_spread(const ResultRow& row) {
  const auto speedup = report::parse_number(cell(row, columns::kSpeedup));
  const auto low = report::parse_number(cell(row, columns::kSpeedupCiLow));
  const auto high = report::parse_number(cell(row, columns::kSpeedupCiHigh));
  if (!speedup || !low || !high || *speedup <= 0 || *high < *low) return "";
  return spread_text(*speedup, *low, *high);
}

std::string host_load() {
  const auto average = load_average();
  return average ? load_text(*average) : "";
}

RunTally tally_rows(const std::vector<ResultRow>& rows) {
  RunTally tally;
  std::set<std::string> models;
  for (const auto& row : rows) {
    models.insert(cell(row, columns::kName));
    BackendTally& backend = tally_for(tally, cell(row, columns::kBackend));
    const bool accuracy = row.kind == ExperimentKind::kAccuracy;
    if (accuracy) backend.accuracy_rows++;
    if (is_passing(row.status())) {
      if (accuracy)
        backend.accuracy_passed++;
      else
        add_performance_row(backend, tally, row);
      continue;
    }
    backend.failed++;
    const std::string key = fmt::format("{} ({}, {})", status_name(row.status()),
                                        experiment_name(row.kind), backend.backend);
    tally.failures[key].push_back(cell(row, columns::kName));
  }
  tally.models = models.size();
  return tally;
}

std::optional<GeomeanSpeedup> geomean_speedup(const BackendTally& tally) {
  if (tally.speedups.empty()) return std::nullopt;
  GeomeanSpeedup out{stats::geometric_mean(tally.speedups), std::nullopt};
  if (tally.intervals.size() == tally.speedups.size()) {
    std::vector<double> lows, highs;
    for (const auto& [low, high] : tally.intervals) {
      lows.push_back(low);
      highs.push_back(high);
    }
    out.band = std::make_pair(stats::geometric_mean(lows), stats::geometric_mean(highs));
  }
  return out;
}

void print_run_summary(const RunTally& tally, std::size_t skipped, std::FILE* out) {
  std::fprintf(out, "\nsummary: %zu model(s), %zu skipped\n", tally.models, skipped);
  print_backend_table(tally, out);
  if (tally.failures.empty()) std::fprintf(out, "  failures: none\n");
  for (const auto& [status, names] : tally.failures)
    std::fprintf(out, "  failures: %s: %s\n", status.c_str(), some_names(names).c_str());
  if (tally.unstable_models.empty()) {
    std::fprintf(out, "  unstable: none\n");
  } else {
    std::fprintf(out, "  unstable (\u2020, may not reproduce): %s\n",
                 some_names(tally.unstable_models).c_str());
  }
  if (!tally.retimed_models.empty()) {
    // How often the other pipelines decided the flag: a measure of what parallel runs cost.
    std::fprintf(out,
                 "  timed again with the other pipelines paused, unstable beside them: %zu (%s); "
                 "stable then: %zu\n",
                 tally.retimed_models.size(), some_names(tally.retimed_models).c_str(),
                 tally.retimed_stable);
  }
  print_host_load(tally, out);
}

}  // namespace zoobench
