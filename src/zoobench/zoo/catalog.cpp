// Zoo discovery.
#include "zoobench/zoo/catalog.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "zoobench/util/errors.h"
#include "zoobench/util/files.h"
#include "zoobench/util/install_layout.h"
#include "zoobench/util/log.h"

namespace fs = std::filesystem;

namespace zoobench {

namespace {

std::string how_to_export(const std::string& zoo_dir) {
  return "name a suite (`zoobench run --suite demo ...` exports what it needs), or export one "
         "with: /usr/bin/python3 tools/export_zoo.py --zoo " +
         zoo_dir + " --suite demo";
}

}  // namespace

ZooCatalog ZooCatalog::scan(const std::string& zoo_dir) {
  if (!fs::is_directory(zoo_dir)) {
    throw UsageError("no zoo at '" + zoo_dir + "'; " + how_to_export(zoo_dir));
  }
  ZooCatalog catalog = scan_or_empty(zoo_dir);
  if (catalog.entries_.empty()) {
    throw UsageError("the zoo at '" + zoo_dir + "' has no models; " + how_to_export(zoo_dir));
  }
  return catalog;
}

void ZooCatalog::add_to_export(const std::string& suite, const std::string& name) {
  if (find(suite, name)) return;
  // Where it sorts (suite, name), as scan leaves the entries.
  const auto at = std::lower_bound(entries_.begin(), entries_.end(), std::tie(suite, name),
                                   [](const ZooEntry& entry, const auto& key) {
                                     return std::tie(entry.suite, entry.name) < key;
                                   });
  entries_.insert(at, zoo_entry_in(directory_, suite, name));
}

ZooEntry zoo_entry_in(const std::string& zoo_dir, const std::string& suite, const std::string& name) {
  return {suite, name, (fs::path(zoo_dir) / suite / name / "manifest.json").string()};
}

ZooCatalog ZooCatalog::scan_or_empty(const std::string& zoo_dir) {
  ZooCatalog catalog;
  catalog.directory_ = zoo_dir;
  if (!fs::is_directory(zoo_dir)) return catalog;
  // One entry that cannot be read (a symbolic-link loop, no permission) is named and passed
  // over: it must not refuse the whole run.
  const auto readable_folder = [](const fs::directory_entry& entry) {
    std::error_code error;
    const bool folder = entry.is_directory(error);
    if (error) log::warn("zoo: passing over {}: {}", entry.path().string(), error.message());
    return folder && !error;
  };
  for (const auto& suite_dir : fs::directory_iterator(zoo_dir)) {
    if (!readable_folder(suite_dir)) continue;
    for (const auto& model_dir : fs::directory_iterator(suite_dir.path())) {
      // A model folder without a manifest (or with a broken one) still counts: loading it
      // yields a model_fail_to_load row rather than silently dropping the model.
      if (!readable_folder(model_dir)) continue;
      fs::path manifest = model_dir.path() / "manifest.json";
      std::error_code error;
      bool has_artifacts =
          fs::exists(manifest, error) || fs::exists(model_dir.path() / "eval.pt", error);
      if (!has_artifacts) continue;
      catalog.entries_.push_back({suite_dir.path().filename().string(),
                                  model_dir.path().filename().string(), manifest.string()});
    }
  }
  std::sort(catalog.entries_.begin(), catalog.entries_.end(),
            [](const ZooEntry& a, const ZooEntry& b) {
              return std::tie(a.suite, a.name) < std::tie(b.suite, b.name);
            });
  fs::path index = fs::path(zoo_dir) / "index.json";
  if (fs::exists(index)) {
    try {
      auto json = nlohmann::json::parse(read_text_file(index.string(), kSmallFileLimitBytes));
      for (const auto& item : json.value("models", nlohmann::json::array())) {
        if (item.value("status", "") == "failed") {
          catalog.failures_.push_back(
              {item.value("suite", ""), item.value("name", ""), item.value("reason", "")});
        }
      }
    } catch (const std::exception&) {
      // The index is informational; a damaged one must not hide the models themselves.
    }
  }
  return catalog;
}

std::vector<ZooEntry> ZooCatalog::models(const std::string& suite) const {
  std::vector<ZooEntry> out;
  for (const auto& entry : entries_) {
    if (suite == "all" || entry.suite == suite) out.push_back(entry);
  }
  return out;
}

std::vector<std::string> ZooCatalog::suites() const {
  std::set<std::string> names;
  for (const auto& entry : entries_) names.insert(entry.suite);
  return {names.begin(), names.end()};
}

std::optional<ZooEntry> ZooCatalog::find(const std::string& suite, const std::string& name) const {
  for (const auto& entry : entries_) {
    if (entry.name == name && (suite == "all" || entry.suite == suite)) return entry;
  }
  return std::nullopt;
}

std::string default_suites_dir() {
  if (const char* env = std::getenv("ZOOBENCH_SUITES"); env && *env) return env;
  if (fs::is_directory("suites")) return "suites";
  return locate_part({"ZOOBENCH_SUITES", "../share/zoobench/suites", ZOOBENCH_SOURCE_SUITES_DIR});
}

}  // namespace zoobench
