// Leaving out the upstream-format twins of zoobench's result files.
#include "zoobench/report/upstream_twins.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "zoobench/results/upstream_format.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"

namespace zoobench::report {
namespace {

namespace fs = std::filesystem;

// One spelling per file: `results/x.csv`, `./results/x.csv` and an absolute path are one file.
std::string normal_path(const fs::path& path) {
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path), error);
  return error ? fs::absolute(path).lexically_normal().string() : canonical.string();
}

bool has_backend(const ResultRow& row) { return !cell(row, columns::kBackend).empty(); }

// zoobench's rows name their backend; upstream's have no such column.
bool is_zoobench_file(const ResultFile& file) {
  return std::any_of(file.rows.begin(), file.rows.end(), has_backend);
}

// A model's row, as the twin repeats it: the device and the model.
std::string row_key(const ResultRow& row) {
  return cell(row, columns::kDev) + "\n" + cell(row, columns::kName);
}

// A twin that zoobench's files imply: the files it mirrors and the rows they hold.
struct Mirrored {
  std::vector<std::string> sources;
  std::set<std::string> rows;
};

// By the twin's path: what `--output-format upstream` wrote beside each of zoobench's files.
std::map<std::string, Mirrored> implied_twins(const std::vector<ResultFile>& files) {
  std::map<std::string, Mirrored> twins;
  for (const auto& file : files) {
    if (!is_zoobench_file(file)) continue;
    const fs::path folder = fs::path(file.path).parent_path();
    for (const auto& row : file.rows) {
      if (!has_backend(row)) continue;
      Mirrored& twin = twins[normal_path(folder / upstream_file_name(row))];
      if (std::find(twin.sources.begin(), twin.sources.end(), file.path) == twin.sources.end())
        twin.sources.push_back(file.path);
      twin.rows.insert(row_key(row));
    }
  }
  return twins;
}

}  // namespace

TwinSelection leave_out_upstream_twins(std::vector<ResultFile> files) {
  const std::map<std::string, Mirrored> twins = implied_twins(files);
  TwinSelection out;
  for (auto& file : files) {
    const auto twin = is_zoobench_file(file) ? twins.end() : twins.find(normal_path(file.path));
    if (twin == twins.end()) {
      out.files.push_back(std::move(file));
      continue;
    }
    std::vector<ResultRow> kept;
    for (auto& row : file.rows) {
      if (!twin->second.rows.count(row_key(row))) kept.push_back(std::move(row));
    }
    const std::size_t left_out = file.rows.size() - kept.size();
    const std::string sources = join(twin->second.sources, ", ");
    if (kept.empty()) {
      out.notes.push_back(fmt::format(
          "left out {}: the upstream-format twin of {} (the same {} row(s) in upstream's "
          "columns); each model is counted once, from zoobench's file",
          file.path, sources, left_out));
      continue;
    }
    std::vector<std::string> names;
    for (const auto& row : kept) names.push_back(cell(row, columns::kName));
    out.notes.push_back(fmt::format(
        "{} is the upstream-format twin of {}: its {} row(s) of the same models are left out; "
        "its {} row(s) of models that {} lacks are read ({})",
        file.path, sources, left_out, kept.size(), sources, join(names, ", ")));
    file.rows = std::move(kept);
    out.files.push_back(std::move(file));
  }
  return out;
}

std::vector<ResultFile> load_results_without_twins(const std::vector<std::string>& paths,
                                                   const std::string& command) {
  std::vector<ResultFile> files;
  for (const auto& path : paths) files.push_back(load_result_file(path));
  TwinSelection selection = leave_out_upstream_twins(std::move(files));
  for (const auto& note : selection.notes) log::info("{}: {}", command, note);
  return std::move(selection.files);
}

}  // namespace zoobench::report
