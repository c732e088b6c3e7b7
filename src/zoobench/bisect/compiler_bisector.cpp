// Inductor's compiler bisector: its driver as a child process, its result line, its report.
#include "zoobench/bisect/compiler_bisector.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "zoobench/backends/backend.h"
#include "zoobench/runner/child_process.h"
#include "zoobench/runner/child_rows.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/text.h"

namespace fs = std::filesystem;

namespace zoobench {

const char* const kCompilerBisectorResultPrefix = "zoobench-compiler-bisector-result: ";

namespace {

constexpr const char* kTitle = "Inductor's compiler bisector";

const std::vector<std::pair<CompilerBisectorStatus, const char*>>& status_names() {
  static const std::vector<std::pair<CompilerBisectorStatus, const char*>> kNames = {
      {CompilerBisectorStatus::kNotApplicable, "not_applicable"},
      {CompilerBisectorStatus::kNotRun, "not_run"},
      {CompilerBisectorStatus::kNotAvailable, "not_available"},
      {CompilerBisectorStatus::kFound, "found"},
      {CompilerBisectorStatus::kNoIssueFound, "no_issue_found"},
      {CompilerBisectorStatus::kError, "error"},
  };
  return kNames;
}

// A JSON value as text: strings as they are, null or missing as "", anything else as JSON.
std::string text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

CompilerBisectorCheck check_from_json(const nlohmann::json& item) {
  CompilerBisectorCheck check;
  check.backend = text(item, "backend");
  check.subsystem = text(item, "subsystem");
  check.run_state = text(item, "run_state");
  check.zoobench_backend = text(item, "zoobench_backend");
  check.status = text(item, "status");
  check.max_abs = text(item, "max_abs");
  check.reason = text(item, "reason");
  check.log = text(item, "log");
  check.seconds = item.value("seconds", 0.0);
  if (auto range = item.find("range");
      range != item.end() && range->is_array() && range->size() == 2)
    check.range = std::make_pair((*range)[0].get<int64_t>(), (*range)[1].get<int64_t>());
  return check;
}

// The last line of `output` that starts with the prefix, without it ("" when none).
std::string last_result_json(const std::string& output) {
  std::istringstream lines(output);
  std::string line, found;
  while (std::getline(lines, line)) {
    if (starts_with(line, kCompilerBisectorResultPrefix))
      found = line.substr(std::char_traits<char>::length(kCompilerBisectorResultPrefix));
  }
  return found;
}

std::string describe(const CompilerBisectorCheck& check) {
  std::string out = check.backend;
  if (!check.subsystem.empty()) out += " " + check.subsystem + " " + check.run_state;
  if (check.range) out += fmt::format(" [{}, {}]", check.range->first, check.range->second);
  return out;
}

// "inductor, subsystem lowerings, bisect number 2 (debug info: relu)".
std::string where(const CompilerBisectorReport& r) {
  std::string out = r.backend;
  if (r.subsystem.empty()) return out + " (no subsystem of it found: the stage as a whole)";
  out += ", subsystem " + r.subsystem;
  if (!r.config_change.empty())
    return out + " (the config change " + r.config_change + " fixes it)";
  if (r.bisect_number) out += fmt::format(", bisect number {}", *r.bisect_number);
  out += " (debug info: " + (r.debug_info.empty() ? std::string("none") : r.debug_info) + ")";
  return out;
}

}  // namespace

std::string compiler_bisector_status_name(CompilerBisectorStatus status) {
  for (const auto& [value, name] : status_names()) {
    if (value == status) return name;
  }
  return "?";
}

bool uses_inductor(const std::string& backend) { return dynamo_backend_of(backend) == "inductor"; }

CompilerBisectorReport parse_compiler_bisector_output(const std::string& output) {
  CompilerBisectorReport report;
  report.status = CompilerBisectorStatus::kError;
  const std::string json_text = last_result_json(output);
  if (json_text.empty()) {
    report.note = "its driver ended without a result line";
    return report;
  }
  nlohmann::json result;
  try {
    result = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    report.note = std::string("its result line does not parse: ") + e.what();
    return report;
  }
  if (!result.is_object()) {
    report.note = "its result line is no JSON object";
    return report;
  }
  const std::string status = text(result, "status");
  bool known = false;
  for (const auto& [value, name] : status_names()) {
    if (name == status) {
      report.status = value;
      known = true;
    }
  }
  report.note = known ? text(result, "note") : "its result has an unknown status '" + status + "'";
  if (!known) report.status = CompilerBisectorStatus::kError;
  report.torch_version = text(result, "torch");
  report.backend = text(result, "backend");
  report.subsystem = text(result, "subsystem");
  report.debug_info = text(result, "debug_info");
  report.config_change = text(result, "config_change");
  if (auto n = result.find("bisect_number"); n != result.end() && n->is_number_integer())
    report.bisect_number = n->get<int64_t>();
  if (auto checks = result.find("checks"); checks != result.end() && checks->is_array()) {
    for (const auto& item : *checks) report.checks.push_back(check_from_json(item));
  }
  return report;
}

std::optional<CompilerBisectorReport> run_compiler_bisector(const CompilerBisectorRequest& request,
                                                            const std::atomic<bool>& interrupted) {
  CompilerBisectorReport report;
  if (request.python.empty()) {
    report.status = CompilerBisectorStatus::kNotAvailable;
    report.note = "zoobench knows no Python to run it with (ZOOBENCH_PYTHON)";
    return report;
  }
  fs::create_directories(request.work_dir);
  const std::string config_path = (fs::path(request.work_dir) / "config.json").string();
  const std::string log = (fs::path(request.work_dir) / "driver.log").string();
  const nlohmann::json config = {{"argv", request.child_argv},
                                 {"environment", request.child_environment},
                                 {"inductor_backend", request.inductor_backend},
                                 {"timeout_s", request.timeout_s},
                                 {"logs_dir", request.work_dir}};
  write_file_atomically(config_path, config.dump(2) + "\n");
  fs::remove(log);
  // The driver imports zoo_compile from the tools folder, before whatever PYTHONPATH has.
  const char* python_path = std::getenv("PYTHONPATH");
  const std::string path_assignment =
      "PYTHONPATH=" + request.tools_dir +
      (python_path && *python_path ? ":" + std::string(python_path) : std::string());
  // No deadline of its own: each check has the step timeout, and there are a few dozen.
  const ChildOutcome outcome =
      run_child({request.python, "-m", "zoo_compile.compiler_bisect", config_path}, log, 0,
                interrupted, {path_assignment});
  if (outcome.kind == ChildOutcome::Kind::kInterrupted || interrupted.load()) return std::nullopt;
  std::string output;
  if (fs::exists(log)) output = read_text_file(log);
  report = parse_compiler_bisector_output(output);
  report.log = log;
  if (report.status == CompilerBisectorStatus::kError && last_result_json(output).empty())
    report.note += ": " + child_failure_reason(outcome, log, 0) + "; its log: " + log;
  return report;
}

std::string format_compiler_bisector(const CompilerBisectorReport& r) {
  std::string out;
  switch (r.status) {
    case CompilerBisectorStatus::kNotApplicable:
      return "";
    case CompilerBisectorStatus::kNotRun:
      return fmt::format("{}: not run ({})\n", kTitle, r.note);
    case CompilerBisectorStatus::kNotAvailable:
      return fmt::format("{}: not available ({}); the config switches were bisected instead\n",
                         kTitle, r.note);
    case CompilerBisectorStatus::kFound:
      out = fmt::format("{} (torch {}, {} checks): first fails at backend {}\n", kTitle,
                        r.torch_version, r.checks.size(), where(r));
      break;
    case CompilerBisectorStatus::kNoIssueFound:
      out = fmt::format("{} (torch {}, {} checks): no issue found: {}\n", kTitle, r.torch_version,
                        r.checks.size(), r.note);
      break;
    case CompilerBisectorStatus::kError:
      out = fmt::format("{}: failed: {}\n", kTitle, r.note);
      break;
  }
  if (!r.checks.empty())
    out += "  checks (backend [subsystem state [range]] -> status, max_abs):\n";
  for (std::size_t i = 0; i < r.checks.size(); ++i) {
    const CompilerBisectorCheck& c = r.checks[i];
    out += fmt::format("    {:>2}. {} -> {}{}\n", i + 1, describe(c), c.summary(), c.why_failed());
  }
  return out;
}

std::string compiler_bisector_summary(const CompilerBisectorReport& r) {
  switch (r.status) {
    case CompilerBisectorStatus::kNotApplicable:
      return "";
    case CompilerBisectorStatus::kNotRun:
      return "not run";
    case CompilerBisectorStatus::kNotAvailable:
      return "not available";
    case CompilerBisectorStatus::kNoIssueFound:
      return "no issue found";
    case CompilerBisectorStatus::kError:
      return "failed";
    case CompilerBisectorStatus::kFound:
      break;
  }
  std::string out = r.backend;
  if (!r.subsystem.empty()) out += " " + r.subsystem;
  if (r.config_change.empty() && r.bisect_number && !r.subsystem.empty())
    out += fmt::format(" #{}", *r.bisect_number);
  if (r.config_change.empty() && !r.debug_info.empty()) out += " (" + r.debug_info + ")";
  return out;
}

nlohmann::json compiler_bisector_json(const CompilerBisectorReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks) {
    nlohmann::json record = check_outcome_json(c);
    record["backend"] = c.backend;
    record["subsystem"] = c.subsystem;
    record["run_state"] = c.run_state;
    record["range"] = c.range ? nlohmann::json::array({c.range->first, c.range->second})
                              : nlohmann::json();
    record["zoobench_backend"] = c.zoobench_backend;
    record["passed"] = c.passed();
    checks.push_back(std::move(record));
  }
  return {{"status", compiler_bisector_status_name(r.status)},
          {"note", r.note},
          {"torch", r.torch_version},
          {"backend", r.backend},
          {"subsystem", r.subsystem},
          {"bisect_number", r.bisect_number ? nlohmann::json(*r.bisect_number) : nlohmann::json()},
          {"debug_info", r.debug_info},
          {"config_change", r.config_change},
          {"checks", checks},
          {"log", r.log}};
}

}  // namespace zoobench
