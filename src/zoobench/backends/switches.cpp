// Switch names: the patch form, which switches act in a mode, and --disable-switches checks.
#include "zoobench/backends/switches.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "zoobench/patches/registry.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {

std::string patch_switch(const std::string& patch) { return kPatchSwitchPrefix + patch; }

std::optional<std::string> patch_of_switch(const std::string& name) {
  if (!starts_with(name, kPatchSwitchPrefix)) return std::nullopt;
  return name.substr(std::string(kPatchSwitchPrefix).size());
}

std::vector<OptimizationSwitch> applicable_switches(const Backend& backend, Mode mode,
                                                    const std::string& device_type) {
  std::vector<OptimizationSwitch> out;
  for (auto& s : backend.switches()) {
    const bool applies = s.applies == "all" ||
                         (s.applies == "inference" && mode == Mode::kInference) ||
                         (s.applies == "training" && mode == Mode::kTraining) ||
                         (s.applies == "cuda" && device_type == "cuda") ||
                         (s.applies == "cpu" && device_type == "cpu");
    if (applies) out.push_back(s);
  }
  return out;
}

std::optional<std::string> unknown_switch_name(const std::vector<std::string>& names,
                                               const std::vector<std::string>& backends) {
  std::vector<std::string> known;
  for (const auto& backend : backends) {
    for (const auto& s : make_backend(backend)->switches()) {
      if (std::find(known.begin(), known.end(), s.name) == known.end()) known.push_back(s.name);
    }
  }
  std::vector<std::string> patch_names;
  for (const auto& p : patches::list_patches()) patch_names.push_back(patch_switch(p.name));
  for (const auto& name : names) {
    if (auto patch = patch_of_switch(name)) {
      if (std::find(patch_names.begin(), patch_names.end(), name) != patch_names.end()) continue;
      return fmt::format("unknown patch '{}'; known: {}", *patch, fmt::join(patch_names, ", "));
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return fmt::format(
          "'{}' is not a switch of {}; known: {}{}patch:<name> for a model's patch (`zoobench "
          "list --switches --backend NAME`)",
          name, fmt::join(backends, ", "), fmt::join(known, ", "), known.empty() ? "" : ", ");
    }
  }
  return std::nullopt;
}

void check_switch_names(const std::vector<std::string>& names,
                        const std::vector<std::string>& backends) {
  if (auto why = unknown_switch_name(names, backends)) throw UsageError("--disable-switches: " + *why);
}

std::vector<std::string> parse_switch_list(const std::string& list) {
  std::vector<std::string> names;
  for (const auto& part : split(list, ',')) {
    std::string name = trim(part);
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  }
  return names;
}

}  // namespace zoobench
