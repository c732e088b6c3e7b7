// zoobench against upstream's harness: see upstream_agreement.h.
#include "zoobench/report/upstream_agreement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "zoobench/report/expected.h"
#include "zoobench/report/markdown.h"
#include "zoobench/report/number_format.h"
#include "zoobench/results/status.h"

namespace zoobench::report {
namespace {

constexpr double kStatusTarget = 0.95;
constexpr double kBreaksTarget = 0.95;
constexpr double kSpeedupTarget = 0.05;

std::optional<double> positive(const std::string& text) {
  auto value = parse_number(text);
  if (value && *value > 0 && std::isfinite(*value)) return value;
  return std::nullopt;
}

// Upstream writes speedup 0 for a model that did not run; zoobench's upstream speedup is
// python_speedup, set only when the row passed.
std::optional<double> speedup_of(const ResultRow& row, bool ours) {
  return positive(cell(row, ours ? columns::kPythonSpeedup.key() : columns::kSpeedup.key()));
}

std::string fixed(std::optional<double> value) {
  return value ? fmt::format("{:.3f}", *value) : "-";
}

bool passed(const std::string& status) {
  const auto parsed = parse_status(status);
  return parsed && is_passing(*parsed);
}

// The side could not build or run the model (offline: a download, data it lacks): it judged
// nothing. Upstream reports a failed load as eager_fail_to_run.
bool could_not_run(const std::string& status) {
  const auto parsed = parse_status(status);
  return parsed && (*parsed == Status::kModelFailToLoad || *parsed == Status::kEagerFailToRun ||
                    *parsed == Status::kEager1stRunFail || *parsed == Status::kEager1stRunOOM);
}

std::string count_or_dash(std::optional<int64_t> count) {
  return count ? std::to_string(*count) : "-";
}

std::string agree_cell(const ModelAgreement& m) {
  if (!m.both_checked()) return "";
  if (!m.both_ran()) return "not run";
  return m.agrees() ? "yes" : "NO";
}

// "zoobench / upstream", "-" where neither side counted.
std::string breaks_cell(const ModelAgreement& m) {
  if (!m.our_breaks && !m.their_breaks) return "-";
  return count_or_dash(m.our_breaks) + " / " + count_or_dash(m.their_breaks);
}

// "{agree} of the {both} models ... ({share}%; target >= {target}%: met)".
std::string share_against_target(int part, int whole, double target) {
  if (whole == 0) return "";
  const double share = static_cast<double>(part) / whole;
  return fmt::format(" ({:.1f}%; target >= {:.0f}%: {})", 100 * share, 100 * target,
                     share >= target ? "met" : "NOT met");
}

// "upstream could not run 3 of the models both checked: a (eager_fail_to_run), ..." per side.
std::string not_run_lines(const UpstreamAgreement& a) {
  std::string out;
  for (const bool ours : {false, true}) {
    std::vector<std::string> names;
    for (const auto& m : a.models) {
      const std::string& status = ours ? m.ours : m.theirs;
      if (m.both_checked() && could_not_run(status)) names.push_back(m.name + " (" + status + ")");
    }
    if (names.empty()) continue;
    out += fmt::format("{} could not run {} of the models both checked (not judged, not counted "
                       "above): {}\n",
                       ours ? "zoobench" : "upstream", names.size(), fmt::join(names, ", "));
  }
  return out;
}

// The summary lines under the table.
std::string summary(const UpstreamAgreement& a) {
  const int both = a.both_ran(), agree = a.agreeing();
  std::string out = fmt::format("\nstatuses agree on {} of the {} models both ran", agree, both) +
                    share_against_target(agree, both, kStatusTarget);
  if (const int compared = a.breaks_compared(); compared > 0) {
    out += fmt::format("; graph_breaks equal on {} of the {} models both passed",
                       a.breaks_equal(), compared) +
           share_against_target(a.breaks_equal(), compared, kBreaksTarget);
  }
  if (auto median = a.median_abs_speedup_deviation()) {
    out += fmt::format("; median |zoobench/upstream - 1| of the speedups {:.1f}% (target <= {:.0f}%: {})",
                       100 * *median, 100 * kSpeedupTarget,
                       *median <= kSpeedupTarget + 1e-9 ? "met" : "NOT met");  // 1.05 / 1 - 1 is 5%
  }
  out += "\n";
  if (const int other = a.checked_at_other_batch_sizes(); other > 0)
    out += fmt::format(
        "{} of the {} models both ran were checked at different batch sizes: their statuses "
        "are not the same experiment\n",
        other, both);
  return out + not_run_lines(a);
}

}  // namespace

bool ModelAgreement::breaks_compared() const {
  return passed(ours) && passed(theirs) && our_breaks && their_breaks;
}

int UpstreamAgreement::breaks_compared() const {
  return static_cast<int>(std::count_if(models.begin(), models.end(),
                                        [](const ModelAgreement& m) { return m.breaks_compared(); }));
}

int UpstreamAgreement::breaks_equal() const {
  return static_cast<int>(std::count_if(models.begin(), models.end(), [](const ModelAgreement& m) {
    return m.breaks_compared() && *m.our_breaks == *m.their_breaks;
  }));
}

int UpstreamAgreement::both_checked() const {
  return static_cast<int>(std::count_if(models.begin(), models.end(),
                                        [](const ModelAgreement& m) { return m.both_checked(); }));
}

bool ModelAgreement::both_ran() const {
  return both_checked() && !could_not_run(ours) && !could_not_run(theirs);
}

int UpstreamAgreement::both_ran() const {
  return static_cast<int>(std::count_if(models.begin(), models.end(),
                                        [](const ModelAgreement& m) { return m.both_ran(); }));
}

int UpstreamAgreement::agreeing() const {
  return static_cast<int>(std::count_if(models.begin(), models.end(),
                                        [](const ModelAgreement& m) { return m.agrees(); }));
}

int UpstreamAgreement::checked_at_other_batch_sizes() const {
  return static_cast<int>(std::count_if(models.begin(), models.end(), [](const ModelAgreement& m) {
    return m.both_ran() && !m.same_inputs();
  }));
}

std::optional<double> UpstreamAgreement::median_abs_speedup_deviation() const {
  std::vector<double> deviations;
  for (const auto& m : models)
    if (m.ratio) deviations.push_back(std::abs(*m.ratio - 1.0));
  if (deviations.empty()) return std::nullopt;
  std::sort(deviations.begin(), deviations.end());
  const std::size_t n = deviations.size();
  return n % 2 ? deviations[n / 2] : (deviations[n / 2 - 1] + deviations[n / 2]) / 2;
}

UpstreamAgreement compare_with_upstream(const std::vector<ResultRow>& ours,
                                        const std::vector<ResultRow>& theirs) {
  std::map<std::pair<std::string, std::string>, ModelAgreement> by_model;
  auto entry = [&](const ResultRow& row) -> ModelAgreement& {
    // Upstream names devices by type: cuda:1 and cuda meet.
    std::string dev = cell(row, columns::kDev);
    dev = dev.substr(0, dev.find(':'));
    ModelAgreement& m = by_model[{cell(row, columns::kName), dev}];
    m.name = cell(row, columns::kName);
    m.dev = dev;
    return m;
  };
  for (const auto& row : ours) {
    ModelAgreement& m = entry(row);
    if (row.kind == ExperimentKind::kAccuracy) {
      m.ours = cell(row, columns::kAccuracy);
      m.our_reason = cell(row, columns::kReason);
      m.our_batch = cell(row, columns::kBatchSize);
      m.our_breaks = counter_of(row, columns::kGraphBreaks.key());
    } else {
      m.our_speedup = speedup_of(row, /*ours=*/true);
    }
  }
  for (const auto& row : theirs) {
    ModelAgreement& m = entry(row);
    if (row.kind == ExperimentKind::kAccuracy) {
      m.theirs = cell(row, columns::kAccuracy);
      m.their_batch = cell(row, columns::kBatchSize);
      m.their_breaks = counter_of(row, columns::kGraphBreaks.key());
    } else
      m.their_speedup = speedup_of(row, /*ours=*/false);
  }
  UpstreamAgreement out;
  for (auto& [key, m] : by_model) {
    if (m.our_speedup && m.their_speedup) m.ratio = *m.our_speedup / *m.their_speedup;
    out.models.push_back(std::move(m));
  }
  return out;
}

std::string format_upstream_agreement(const UpstreamAgreement& a) {
  std::vector<std::vector<std::string>> table;
  for (const auto& m : a.models) {
    const std::string batches = m.our_batch.empty() && m.their_batch.empty()
                                    ? "-"
                                    : (m.our_batch.empty() ? "-" : m.our_batch) + " / " +
                                          (m.their_batch.empty() ? "-" : m.their_batch);
    table.push_back({m.name, m.dev, m.ours.empty() ? "-" : m.ours,
                     m.theirs.empty() ? "-" : m.theirs, batches,
                     agree_cell(m), breaks_cell(m),
                     format_speedup(m.our_speedup), format_speedup(m.their_speedup),
                     fixed(m.ratio)});
  }
  // Both sides' speedups are upstream's, against the model's Python module; neither has an
  // interval, so each shows three significant digits.
  std::string out = markdown_table({"model", "dev", "zoobench", "upstream", "batch", "agree",
                                    "graph_breaks", "zoobench speedup vs Python eager",
                                    "upstream speedup vs Python eager", "ratio"},
                                   table);
  out += "\n*batch*: the accuracy checks' batch sizes, zoobench / upstream; *graph_breaks*: the "
         "accuracy rows' counts, zoobench / upstream.\n";
  out += summary(a);
  bool first = true;
  for (const auto& m : a.models) {
    if (!m.both_ran() || m.agrees()) continue;
    if (first) out += "\ndisagreements (zoobench's reason):\n";
    first = false;
    out += fmt::format("- {} ({}): zoobench {}, upstream {}: {}\n", m.name, m.dev, m.ours,
                       m.theirs, m.our_reason.empty() ? "(no reason recorded)" : m.our_reason);
  }
  return out;
}

}  // namespace zoobench::report
