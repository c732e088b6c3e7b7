// ddmin over switch names, the bisect search around it, and its text and JSON forms.
#include "zoobench/bisect/bisect.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

std::vector<std::vector<std::string>> split_into(const std::vector<std::string>& items,
                                                 std::size_t n) {
  std::vector<std::vector<std::string>> chunks;
  std::size_t start = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t end = start + (items.size() - start) / (n - i);
    chunks.emplace_back(items.begin() + start, items.begin() + end);
    start = end;
  }
  return chunks;
}

std::vector<std::string> without(const std::vector<std::string>& items,
                                 const std::vector<std::string>& removed) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    if (std::find(removed.begin(), removed.end(), item) == removed.end()) out.push_back(item);
  }
  return out;
}

// `items` in the order of `order`.
std::vector<std::string> ordered_like(std::vector<std::string> items,
                                      const std::vector<std::string>& order) {
  std::vector<std::string> out;
  for (const auto& name : order) {
    if (std::find(items.begin(), items.end(), name) != items.end()) out.push_back(name);
  }
  return out;
}

std::string list_or_none(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : join(names, ",");
}

}  // namespace

std::string verdict_name(BisectVerdict verdict) {
  switch (verdict) {
    case BisectVerdict::kNothingToBisect: return "nothing_to_bisect";
    case BisectVerdict::kFound: return "found";
    case BisectVerdict::kFailsWithoutOptimization: return "fails_without_optimization";
  }
  return "?";
}

std::vector<std::string> minimal_passing_subset(
    const std::vector<std::string>& items,
    const std::function<bool(const std::vector<std::string>&)>& passes) {
  std::map<std::set<std::string>, bool> asked;
  auto test = [&](const std::vector<std::string>& subset) {
    std::set<std::string> key(subset.begin(), subset.end());
    auto it = asked.find(key);
    if (it != asked.end()) return it->second;
    return asked[key] = passes(subset);
  };
  std::vector<std::string> current = items;
  std::size_t n = 2;
  while (current.size() >= 2) {
    n = std::min(n, current.size());
    auto chunks = split_into(current, n);
    bool reduced = false;
    for (const auto& chunk : chunks) {
      if (test(chunk)) {
        current = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    // With two chunks each complement is the other chunk, already asked.
    for (std::size_t i = 0; !reduced && n > 2 && i < chunks.size(); ++i) {
      auto complement = without(current, chunks[i]);
      if (test(complement)) {
        current = complement;
        n = std::max<std::size_t>(n - 1, 2);
        reduced = true;
      }
    }
    if (reduced) continue;
    if (n >= current.size()) break;
    n = std::min(2 * n, current.size());
  }
  return current;
}

BisectReport bisect_switches(const std::vector<std::string>& switches,
                             const std::map<std::string, std::string>& requires_switch,
                             const RunStep& run_step) {
  BisectReport report;
  report.switches = switches;
  std::map<std::set<std::string>, bool> ran;
  auto passes = [&](const std::vector<std::string>& disabled) {
    std::set<std::string> key(disabled.begin(), disabled.end());
    if (auto it = ran.find(key); it != ran.end()) return it->second;
    BisectStep step = run_step(ordered_like(disabled, switches));
    const bool passed = step.passed();
    report.steps.push_back(std::move(step));
    return ran[key] = passed;
  };
  if (passes({})) {
    report.verdict = BisectVerdict::kNothingToBisect;
    return report;
  }
  if (switches.empty() || !passes(switches)) {
    report.verdict = BisectVerdict::kFailsWithoutOptimization;
    return report;
  }
  // The culprit: ddmin over the switches left on. "Fails with only S on" is a property of S
  // that the full set has and the empty set lacks, the same shape as `passes`.
  auto with_needs = [&](std::vector<std::string> on) {
    for (std::size_t i = 0; i < on.size(); ++i) {
      auto need = requires_switch.find(on[i]);
      if (need != requires_switch.end() &&
          std::find(switches.begin(), switches.end(), need->second) != switches.end() &&
          std::find(on.begin(), on.end(), need->second) == on.end())
        on.push_back(need->second);
    }
    return on;
  };
  auto fails_with_only = [&](const std::vector<std::string>& on) {
    return !passes(without(switches, with_needs(on)));
  };
  std::vector<std::string> needed = minimal_passing_subset(switches, fails_with_only);
  // A switch in the culprit only for the one it brings along (nnc_fuser for executor): name
  // the one it brings, where that alone still fails.
  for (auto& name : needed) {
    auto need = requires_switch.find(name);
    if (need == requires_switch.end() ||
        std::find(switches.begin(), switches.end(), need->second) == switches.end() ||
        std::find(needed.begin(), needed.end(), need->second) != needed.end())
      continue;
    auto candidate = without(needed, {name});
    candidate.push_back(need->second);
    if (fails_with_only(candidate)) name = need->second;
  }
  report.culprit = ordered_like(needed, switches);
  // The fix: ddmin over the switches turned off.
  std::vector<std::string> fix = minimal_passing_subset(switches, passes);
  // Prefer the specific switch to the one it requires (a set of the same size).
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& general : fix) {
      for (const auto& [specific, required] : requires_switch) {
        if (required != general ||
            std::find(switches.begin(), switches.end(), specific) == switches.end() ||
            std::find(fix.begin(), fix.end(), specific) != fix.end())
          continue;
        auto candidate = without(fix, {general});
        candidate.push_back(specific);
        if (passes(candidate)) {
          fix = candidate;
          changed = true;
          break;
        }
      }
      if (changed) break;
    }
  }
  report.fix = ordered_like(fix, switches);
  report.verdict = BisectVerdict::kFound;
  return report;
}

std::string format_bisect_report(const BisectReport& report) {
  std::string out = fmt::format("bisect {} ({}, {}, {}, {}); switches on: {}\n", report.model,
                                report.suite, report.backend, report.mode, report.device,
                                list_or_none(report.switches));
  if (!report.suite_switches_off.empty()) {
    out += fmt::format("the suite turns off {} for this model in every step, not searched ({}); "
                       "--ignore-suite-switches searches them too\n",
                       join(report.suite_switches_off, ", "), first_line(report.suite_switches_reason));
  }
  switch (report.verdict) {
    case BisectVerdict::kNothingToBisect:
      out += "nothing to bisect: the model passes with every switch on\n";
      break;
    case BisectVerdict::kFound:
      out += report.culprit.size() > 1
                 ? fmt::format("found: {} break it together (with only these on it fails, with "
                               "one of them off it passes)\n",
                               join(report.culprit, " + "))
                 : fmt::format("found: {} breaks it\n", list_or_none(report.culprit));
      out += fmt::format("fix: turning off {} makes it pass\n", join(report.fix, " + "));
      break;
    case BisectVerdict::kFailsWithoutOptimization:
      out += report.switches.empty()
                 ? "fails with no optimization: the backend has no switch to turn off here\n"
                 : "fails with no optimization: every switch off fails too, so the cause is the "
                   "eager/export side or the model\n";
      break;
  }
  out += "steps (switches off -> status, max_abs):\n";
  for (std::size_t i = 0; i < report.steps.size(); ++i) {
    const BisectStep& step = report.steps[i];
    out += fmt::format("  {:>2}. {} -> {}{}\n", i + 1, list_or_none(step.disabled), step.summary(),
                       step.why_failed());
  }
  if (report.verdict != BisectVerdict::kNothingToBisect) {
    out += format_divergence(report.divergence);
    out += format_compiler_bisector(report.compiler_bisector);
  }
  return out;
}

nlohmann::json bisect_report_json(const BisectReport& report) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& step : report.steps) {
    nlohmann::json record = check_outcome_json(step);
    record["disabled"] = step.disabled;
    record["passed"] = step.passed();
    steps.push_back(std::move(record));
  }
  return {{"model", report.model},       {"suite", report.suite},
          {"backend", report.backend},   {"device", report.device},
          {"mode", report.mode},         {"switches", report.switches},
          {"suite_switches_off",
           {{"switches", report.suite_switches_off}, {"reason", report.suite_switches_reason}}},
          {"verdict", verdict_name(report.verdict)},
          {"culprit", report.culprit},   {"fix", report.fix},
          {"steps", steps},              {"divergence", divergence_json(report.divergence)},
          {"compiler_bisector", compiler_bisector_json(report.compiler_bisector)}};
}

}  // namespace zoobench
