#include "zoobench/runner/resume_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

#include "zoobench/results/columns.h"
#include "zoobench/results/result_files.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

// The flag a setting comes from, for the message.
const char* flag_of(const std::string& setting) {
  static const std::map<std::string, const char*> kFlags = {
      {"mode", "--training / --inference"},
      {"dtype", "--float16 / --bfloat16 / --amp (float32 when none)"},
      {"batch_size", "--batch-size"},
      {"device", "--devices"},
      {"backend", "--backend"},
      {"cudagraphs", "--disable-cudagraphs"},
      {"patches", "--no-patches"},
      {"compile_options", "--compile-options"},
      {"tolerance", "--tol"},
      {"cosine", "--cosine"},
      {"channels_last", "--channels-last"},
      {"freezing", "--freezing"},
      {"dynamic_shapes", "--dynamic-shapes"},
      {"optimizer", "--optimizer / --lr"},
      {"disabled_switches", "--disable-switches"},
      {"suite_switches", "--ignore-suite-switches"},
      {"skip_accuracy_check", "--skip-accuracy-check"},
      {"eager_reference", "--eager-reference"},
  };
  const auto it = kFlags.find(setting);
  return it == kFlags.end() ? "" : it->second;
}

std::string shown(const nlohmann::json& value) {
  if (value.is_null()) return "(not given)";
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// The settings the JSON twin recorded, or null (an older file, no twin, a damaged one).
nlohmann::json recorded_settings(const std::string& csv_path) {
  const std::filesystem::path twin = std::filesystem::path(csv_path).replace_extension(".json");
  std::error_code error;
  if (!std::filesystem::is_regular_file(twin, error)) return nullptr;
  try {
    const nlohmann::json parsed = parse_result_json(read_text_file(twin.string()), twin.string());
    return parsed.at("context").at("settings");
  } catch (const std::exception&) {
    return nullptr;
  }
}

// What the rows themselves say: each row's backend against the run's (a file shared by the
// backends of --output), and where the twin recorded no settings (an older file) each row's mode
// and dtype.
void differences_in_rows(const RunOptions& options, const std::string& csv_path,
                         bool settings_recorded, std::vector<std::string>& differences) {
  ResultFile file;
  try {
    file = load_result_file(csv_path);
  } catch (const std::exception&) {
    return;  // ResultSink sets untrusted rows aside and says so
  }
  const nlohmann::json settings = run_settings(options);
  auto differs = [&](const std::string& setting, const std::string& found, const std::string& run) {
    if (found.empty() || found == run) return;
    const std::string line = fmt::format("{} '{}' in its rows, '{}' in this run ({})", setting,
                                         found, run, flag_of(setting));
    if (std::find(differences.begin(), differences.end(), line) == differences.end())
      differences.push_back(line);
  };
  for (const auto& row : file.rows) {
    auto cell_of = [&](const columns::Column& column) {
      const auto it = row.cells.find(column.key());
      return it == row.cells.end() ? std::string() : it->second;
    };
    const std::string backend = cell_of(columns::kBackend);
    if (std::find(options.backends.begin(), options.backends.end(), backend) ==
        options.backends.end())
      differs("backend", backend, join(options.backends, ","));
    if (settings_recorded) continue;
    differs("mode", cell_of(columns::kMode), settings["mode"].get<std::string>());
    differs("dtype", cell_of(columns::kDtype), settings["dtype"].get<std::string>());
  }
}

}  // namespace

nlohmann::json run_settings(const RunOptions& options) {
  nlohmann::json s;
  s["mode"] = mode_name(options.mode);
  s["dtype"] = precision_name(options.precision);
  s["batch_size"] = options.batch_size ? nlohmann::json(*options.batch_size) : nlohmann::json();
  s["device"] =
      options.devices.empty() ? "" : options.devices[0].substr(0, options.devices[0].find(':'));
  s["cudagraphs"] = options.cudagraphs;
  s["patches"] = options.patches;
  s["compile_options"] = options.compile_options_json;
  s["tolerance"] = options.tolerance ? nlohmann::json(*options.tolerance) : nlohmann::json();
  s["cosine"] = options.cosine;
  s["channels_last"] = options.channels_last;
  s["freezing"] = options.freezing;
  s["dynamic_shapes"] = options.dynamic_shapes;
  s["optimizer"] = options.mode == Mode::kTraining
                       ? nlohmann::json(fmt::format("{} lr {}", options.optimizer.kind,
                                                    options.optimizer.learning_rate))
                       : nlohmann::json();
  s["disabled_switches"] = join(options.disabled_switches, ",");
  s["suite_switches"] = options.suite_switches;
  s["skip_accuracy_check"] = options.skip_accuracy_check;
  s["eager_reference"] = eager_reference(options);
  return s;
}

void check_resume_settings(const RunOptions& options, const std::string& csv_path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(csv_path, error)) return;
  std::vector<std::string> differences;
  const nlohmann::json recorded = recorded_settings(csv_path);
  if (recorded.is_object()) {
    const nlohmann::json now = run_settings(options);
    for (const auto& [setting, value] : now.items()) {
      if (!recorded.contains(setting) || recorded[setting] == value) continue;
      differences.push_back(fmt::format("{} {} in the file, {} in this run ({})", setting,
                                        shown(recorded[setting]), shown(value), flag_of(setting)));
    }
  }
  differences_in_rows(options, csv_path, recorded.is_object(), differences);
  if (differences.empty()) return;
  throw UsageError(fmt::format(
      "--resume: {} was made with other settings than this run: {}. Its rows and this run's "
      "would read as one run's: resume with the settings it was made with, or write this run "
      "elsewhere (--output-directory DIR, --output FILE)",
      csv_path, join(differences, "; ")));
}

}  // namespace zoobench
