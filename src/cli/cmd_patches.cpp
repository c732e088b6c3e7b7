// `zoobench patches`: the registered patches, what each overrides, and which models use them.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "zoobench/patches/registry.h"
#include "zoobench/runner/selection.h"
#include "zoobench/util/text.h"

namespace zoobench::cli {
namespace {

int run_patches(const std::string& suites_dir_flag) {
  const std::string suites_dir = suites_dir_flag.empty() ? default_suites_dir() : suites_dir_flag;
  std::vector<std::string> suites;
  if (std::filesystem::is_directory(suites_dir)) {
    for (const auto& file : std::filesystem::directory_iterator(suites_dir)) {
      if (file.path().extension() == ".yaml") suites.push_back(file.path().stem().string());
    }
  }
  std::sort(suites.begin(), suites.end());
  auto configs = load_suite_configs(suites_dir, suites);
  for (const auto& patch : patches::list_patches()) {
    std::cout << patch.name << ": " << patch.description << "\n";
    std::cout << "  overrides: " << patches::describe_overrides(patch) << "\n";
    if (!patch.applies.empty()) std::cout << "  applies:   " << patch.applies << "\n";
    std::vector<std::string> users;
    for (const auto& [suite, config] : configs) {
      for (const auto& [model, names] : config.patch_assignments()) {
        if (std::find(names.begin(), names.end(), patch.name) != names.end()) users.push_back(suite + "/" + model);
      }
    }
    std::cout << "  used by:   " << (users.empty() ? "(no model in " + suites_dir + ")" : join(users, ", ")) << "\n";
  }
  return kExitOk;
}

void setup_patches(CLI::App& app, int& exit_status) {
  auto suites_dir = std::make_shared<std::string>();
  CLI::App* c = app.add_subcommand("patches", "Registered patches, what each overrides, and which models use it");
  c->add_option("--suites-dir", *suites_dir, "folder with <suite>.yaml");
  c->callback([suites_dir, &exit_status] { exit_status = run_patches(*suites_dir); });
}

}  // namespace

ZOOBENCH_COMMAND(patches, setup_patches);

}  // namespace zoobench::cli
