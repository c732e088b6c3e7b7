// What a zoo folder holds: the exported models (zoo/<suite>/<model>/manifest.json) and the
// exporter's record of models that failed to export (zoo/index.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zoobench {

struct ZooEntry {
  std::string suite;
  std::string name;
  std::string manifest_path;
};

struct ExportFailure {
  std::string suite;
  std::string name;
  std::string reason;
};

class ZooCatalog {
 public:
  // Scans `zoo_dir`. Throws UsageError saying how to export when the folder is missing or empty.
  static ZooCatalog scan(const std::string& zoo_dir);
  // The same, for a run that exports what it lacks: a missing or empty zoo is an empty catalog.
  static ZooCatalog scan_or_empty(const std::string& zoo_dir);

  // A model the zoo does not hold yet (a run exports it on demand): listed with the manifest
  // path its export will have. Nothing when the zoo already has it.
  void add_to_export(const std::string& suite, const std::string& name);

  const std::string& directory() const { return directory_; }
  // Models of one suite ("all": every suite), sorted by name.
  std::vector<ZooEntry> models(const std::string& suite) const;
  std::vector<std::string> suites() const;
  std::optional<ZooEntry> find(const std::string& suite, const std::string& name) const;
  const std::vector<ExportFailure>& export_failures() const { return failures_; }

 private:
  std::string directory_;
  std::vector<ZooEntry> entries_;
  std::vector<ExportFailure> failures_;
};

// `suite`/`name`'s entry in the zoo at `zoo_dir`: where its manifest is, or will be once exported.
ZooEntry zoo_entry_in(const std::string& zoo_dir, const std::string& suite, const std::string& name);

// The folder holding suites/*.yaml and *_models_list.txt: $ZOOBENCH_SUITES, else ./suites,
// else the source tree's suites/ this binary was built from.
std::string default_suites_dir();

}  // namespace zoobench
