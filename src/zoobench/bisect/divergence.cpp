// The level-by-level search for the first submodule that fails alone.
#include "zoobench/bisect/divergence.h"

#include <fmt/format.h>

#include "zoobench/util/text.h"

namespace zoobench {

bool SubmoduleCheck::compiled_side_failed() const {
  return status == "fail_accuracy" || status == "fail_to_run" || status == "crash" ||
         status == "timeout" || status == "OOM";
}

std::string divergence_verdict_name(DivergenceVerdict verdict) {
  switch (verdict) {
    case DivergenceVerdict::kFound: return "found";
    case DivergenceVerdict::kNoChildFailsAlone: return "no_child_fails_alone";
    case DivergenceVerdict::kNotSearched: return "not_searched";
  }
  return "not_searched";
}

DivergenceReport find_first_divergence(const CaptureLevel& capture, const CheckSubmodule& check,
                                       int max_depth) {
  DivergenceReport report;
  std::string parent;
  for (int depth = 0; depth < max_depth; ++depth) {
    report.levels.push_back(parent);
    const SubmoduleCheck* failing = nullptr;
    for (const SubmoduleCandidate& candidate : capture(parent)) {
      if (!candidate.skipped.empty()) continue;
      report.checks.push_back(check(candidate));
      if (report.checks.back().compiled_side_failed()) {
        failing = &report.checks.back();
        break;
      }
    }
    if (failing == nullptr) break;
    report.path = failing->candidate.path;
    report.repro = failing->candidate.folder;
    parent = failing->candidate.path;
  }
  if (report.path.empty()) {
    report.verdict = DivergenceVerdict::kNoChildFailsAlone;
    report.note = "no child of the model fails alone: the fault needs several of them together "
                  "(a fusion or fold across them) or lies in the model's own code between them";
  } else {
    report.verdict = DivergenceVerdict::kFound;
    std::size_t children = 0;
    for (const auto& c : report.checks) children += c.candidate.path.rfind(report.path + ".", 0) == 0;
    report.note = children == 0 ? "it calls no submodule that can run alone"
                                : fmt::format("none of its {} children checked fails alone", children);
  }
  return report;
}

namespace {

const SubmoduleCheck* check_of(const DivergenceReport& report, const std::string& path) {
  for (const auto& c : report.checks) {
    if (c.candidate.path == path) return &c;
  }
  return nullptr;
}

}  // namespace

std::string format_divergence(const DivergenceReport& report) {
  std::string out;
  switch (report.verdict) {
    case DivergenceVerdict::kNotSearched:
      return "first diverging submodule: not searched (" + report.note + ")\n";
    case DivergenceVerdict::kNoChildFailsAlone:
      out += "first diverging submodule: none; " + report.note + "\n";
      break;
    case DivergenceVerdict::kFound: {
      const SubmoduleCheck* c = check_of(report, report.path);
      out += fmt::format("first diverging submodule: {} ({}) fails alone on the inputs eager gave it: "
                         "{}, max_abs {}, rmse vs float64 {} (eager's {})\n",
                         report.path, c ? c->candidate.type : "", c ? c->status : "",
                         c ? c->max_abs : "", c ? c->rmse_res : "", c ? c->rmse_ref : "");
      if (!report.note.empty()) out += "  " + report.note + "\n";
      out += "  repro: " + report.repro + "\n";
      for (const auto& line : split(report.repro_command, '\n')) {
        if (!line.empty()) out += "    " + line + "\n";
      }
      break;
    }
  }
  out += "submodules checked alone (path -> status, max_abs):\n";
  for (std::size_t i = 0; i < report.checks.size(); ++i) {
    const auto& c = report.checks[i];
    out += fmt::format("  {:>3}. {} -> {}\n", i + 1, c.candidate.path, c.summary());
  }
  return out;
}

nlohmann::json divergence_json(const DivergenceReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : report.checks) {
    nlohmann::json record = check_outcome_json(c);
    record["path"] = c.candidate.path;
    record["type"] = c.candidate.type;
    record["model"] = c.candidate.model;
    record["folder"] = c.candidate.folder;
    record["rmse_res"] = c.rmse_res;
    record["rmse_ref"] = c.rmse_ref;
    checks.push_back(std::move(record));
  }
  return {{"verdict", divergence_verdict_name(report.verdict)},
          {"path", report.path},
          {"repro", report.repro},
          {"repro_command", report.repro_command},
          {"note", report.note},
          {"levels", report.levels},
          {"checks", checks}};
}

}  // namespace zoobench
