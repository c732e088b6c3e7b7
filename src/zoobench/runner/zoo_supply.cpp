// The export thread and the disk budget.
#include "zoobench/runner/zoo_supply.h"

#include <fmt/format.h>
#include <ftw.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "zoobench/runner/child_process.h"
#include "zoobench/runner/child_rows.h"
#include "zoobench/util/files.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

std::string gigabytes(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }

std::string manifest_path_of(const SupplySettings& settings, const ZooEntry& model) {
  return zoo_entry_in(settings.request.zoo_dir, model.suite, model.name).manifest_path;
}

// Why an export that left no usable entry failed: the exporter's index first (its own words),
// then how the process ended.
std::string export_failure(const SupplySettings& settings, const ZooEntry& model,
                           const ChildOutcome& outcome, const std::string& log) {
  if (outcome.kind == ChildOutcome::Kind::kTimedOut) {
    return fmt::format("the export took longer than --timeout {:.0f} s", settings.timeout_s);
  }
  if (auto record = export_record(settings.request.zoo_dir, model.suite, model.name);
      record && record->status == "failed" && !record->reason.empty()) {
    return record->reason;
  }
  if (outcome.kind == ChildOutcome::Kind::kExited && outcome.exit_code == 0) {
    return "the exporter ended without what the run needs: " +
           missing_for(manifest_path_of(settings, model), settings.request).value_or("?");
  }
  return child_failure_reason(outcome, log, settings.timeout_s);
}

double g_walked_bytes = 0;  // nftw's callback takes no context: folder_bytes serializes its walks

int add_file_bytes(const char*, const struct stat* info, int type, struct FTW*) {
  if (type == FTW_F) g_walked_bytes += static_cast<double>(info->st_size);
  return 0;
}

}  // namespace

// nftw, not std::filesystem's iterators: PyTorch's pip wheels interpose their own copies of
// those (files.h, remove_tree).
double folder_bytes(const std::string& folder) {
  static std::mutex walk_mutex;
  std::lock_guard<std::mutex> lock(walk_mutex);
  g_walked_bytes = 0;
  if (::nftw(folder.c_str(), add_file_bytes, 16, FTW_PHYS) != 0) return 0;
  return g_walked_bytes;
}

ZooSupply::ZooSupply(SupplySettings settings, std::vector<ZooEntry> models,
                     std::map<std::string, int> jobs_per_model,
                     const std::atomic<bool>& interrupted)
    : settings_(std::move(settings)),
      jobs_left_(std::move(jobs_per_model)),
      interrupted_(interrupted) {
  std::size_t exported_by_models = 0;
  for (const auto& model : models) {
    in_use_.emplace(key(model), ModelUseLock(settings_.request.zoo_dir, model.suite, model.name));
    std::error_code error;
    if (!fs::exists(fs::path(settings_.request.zoo_dir) / model.suite / model.name, error))
      owned_.insert(key(model));
    if (!settings_.check_zoo_dir.empty() &&
        !fs::exists(fs::path(settings_.check_zoo_dir) / model.suite / model.name, error))
      owned_checks_.insert(key(model));
    if (!missing_for(manifest_path_of(settings_, model), settings_.request)) {
      settled_[key(model)] = ModelSupply{true, "", ""};
    } else if (settings_.exports_in_model_processes) {
      settled_[key(model)] = ModelSupply{true, "", ""};  // its process exports it
      ++exported_by_models;
    } else {
      to_export_.push_back(model);
    }
  }
  if (exported_by_models > 0) {
    log::info(
        "{} model(s) to export into {} by their own processes as the run goes (recipes: "
        "nothing traced)",
        exported_by_models, settings_.request.zoo_dir);
  }
  if (!to_export_.empty()) {
    log::info("{} model(s) to export into {} as the run goes (--no-export refuses){}",
              to_export_.size(), settings_.request.zoo_dir,
              settings_.max_bytes > 0 ? ", within --zoo-max-gb " + gigabytes(settings_.max_bytes)
                                      : std::string());
    thread_ = std::thread([this] { run_exports(); });
  }
}

ZooSupply::~ZooSupply() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_export_.store(true);
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ModelSupply ZooSupply::await(const ZooEntry& model) {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::string k = key(model);
  awaited_.insert(k);
  changed_.notify_all();
  while (!settled_.count(k)) {
    if (interrupted_.load() || stopping_) {
      awaited_.erase(awaited_.find(k));
      return ModelSupply{false, "interrupted", ""};
    }
    changed_.wait_for(lock, std::chrono::milliseconds(200));
  }
  awaited_.erase(awaited_.find(k));
  if (unclaimed_.erase(k)) changed_.notify_all();
  return settled_.at(k);
}

void ZooSupply::job_done(const ZooEntry& model) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string k = key(model);
  if (--jobs_left_[k] > 0) return;
  const auto settled = settled_.find(k);
  if (settled != settled_.end() && settled->second.ready && !settled->second.log.empty() &&
      exported_running_ > 0) {
    --exported_running_;
  }
  in_use_.erase(k);  // this run's hold first: its own eviction takes the lock exclusively
  if (owned_.count(k) || owned_checks_.count(k)) finished_.push_back(model);
  if (settings_.max_bytes > 0) evict_finished_locked();
  changed_.notify_all();
}

// Deletes finished models' folders (with their checks' where the run has a check zoo), oldest
// first, until the zoo is under the budget; returns the zoo's bytes after.
double ZooSupply::evict_finished_locked() {
  const std::string& checks = settings_.check_zoo_dir;
  double bytes = folder_bytes(settings_.request.zoo_dir) + (checks.empty() ? 0 : folder_bytes(checks));
  while (bytes > settings_.max_bytes && !finished_.empty()) {
    const ZooEntry model = finished_.front();
    finished_.pop_front();
    if (owned_.count(key(model))) bytes -= evict_folder(settings_.request.zoo_dir, model);
    if (owned_checks_.count(key(model))) bytes -= evict_folder(checks, model);
  }
  return bytes;
}

// Deletes `model`'s folder in `zoo_dir` unless another run or exporter uses it; the bytes freed.
double ZooSupply::evict_folder(const std::string& zoo_dir, const ZooEntry& model) {
  const fs::path folder = fs::path(zoo_dir) / model.suite / model.name;
  const double freed = folder_bytes(folder.string());
  if (freed <= 0) return 0;
  std::string error;
  switch (evict_model_folder(zoo_dir, model.suite, model.name, &error)) {
    case EvictOutcome::kDeleted:
      log::info(
          "zoo: deleted {} from {} ({}), which this run exported and whose rows are all "
          "written, to stay under --zoo-max-gb {}",
          model.name, zoo_dir, gigabytes(freed), gigabytes(settings_.max_bytes));
      return freed;
    case EvictOutcome::kInUse:
      log::info("zoo: kept {} in {}: another run or exporter is using it", model.name, zoo_dir);
      return 0;
    case EvictOutcome::kFailed:
      log::warn("zoo: could not delete {}: {}", folder.string(), error);
      return 0;
  }
  return 0;
}

// Waits until the next export may start: fewer than `ahead` exported models wait for a worker, and
// the zoo has room (or nothing this run could delete to make it). False when the run is over or
// interrupted.
bool ZooSupply::wait_for_room(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (stopping_ || interrupted_.load()) return false;
    bool room = true;
    if (settings_.max_bytes > 0) {
      const double bytes = evict_finished_locked();
      if (bytes > settings_.max_bytes) {
        // Room comes only from models being worked on; with none (the time budget may leave
        // exported models unstarted) while a worker waits, waiting longer would never end.
        const std::size_t in_work =
            exported_running_ - std::min(exported_running_, unclaimed_.size());
        room = exported_running_ == 0 || (in_work == 0 && !awaited_.empty());
        if (room && !over_budget_warned_) {
          over_budget_warned_ = true;
          log::warn(
              "zoo: {} holds {} with nothing this run may delete, over --zoo-max-gb {}; "
              "exporting the next model anyway",
              settings_.request.zoo_dir, gigabytes(bytes), gigabytes(settings_.max_bytes));
        }
      }
    }
    // A worker blocked on a model is never kept waiting by the look-ahead's limit.
    const bool wanted = !awaited_.empty() || unclaimed_.size() < settings_.ahead;
    if (room && wanted) return true;
    changed_.wait_for(lock, std::chrono::milliseconds(500));
  }
}

// The model a worker is blocked on, if one is still to export (a time budget may start jobs out
// of order), else the next in job order.
ZooEntry ZooSupply::take_next_locked() {
  auto next = std::find_if(to_export_.begin(), to_export_.end(),
                           [this](const ZooEntry& m) { return awaited_.count(key(m)) > 0; });
  if (next == to_export_.end()) next = to_export_.begin();
  ZooEntry model = *next;
  to_export_.erase(next);
  return model;
}

void ZooSupply::run_exports() {
  for (;;) {
    ZooEntry model;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (to_export_.empty() || !wait_for_room(lock)) return;
      model = take_next_locked();
    }
    ModelSupply supply = export_model(model);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (supply.ready) {
        ++exported_running_;
        unclaimed_.insert(key(model));
      }
      settled_[key(model)] = supply;
    }
    changed_.notify_all();
  }
}

ModelSupply ZooSupply::export_model(const ZooEntry& model) {
  const std::string log_path =
      (fs::path(settings_.logs_dir) / (model.name + ".export.log")).string();
  fs::create_directories(settings_.logs_dir);
  std::vector<std::string> argv = {settings_.python, settings_.exporter};
  const auto args = exporter_arguments(settings_.request, model.suite, model.name);
  argv.insert(argv.end(), args.begin(), args.end());
  std::ofstream(log_path, std::ios::app) << "zoobench: exporting " << model.suite << "/"
                                         << model.name << ": " << join(argv, " ") << "\n";
  log::info("export {}: started (log: {})", model.name, log_path);
  // The exporter's child stops with the run: a watcher turns an interrupt into its stop flag.
  std::atomic<bool> export_done{false};
  std::thread watcher([&] {
    while (!export_done.load()) {
      if (interrupted_.load()) stop_export_.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  log::debug("export: {}", join(argv, " "));
  const ChildOutcome outcome =
      run_child(argv, log_path, settings_.timeout_s, stop_export_,
                {"PYTHONUNBUFFERED=1", "ZOOBENCH_BIN=" + current_executable()});
  export_done.store(true);
  watcher.join();
  if (outcome.kind == ChildOutcome::Kind::kInterrupted || stop_export_.load()) {
    return ModelSupply{false, "interrupted", log_path};
  }
  const auto missing = missing_for(manifest_path_of(settings_, model), settings_.request);
  if (!missing) {
    log::info("export {}: done in {:.0f} s", model.name, outcome.seconds);
    return ModelSupply{true, "", log_path, outcome.seconds};
  }
  const std::string reason = export_failure(settings_, model, outcome, log_path);
  log::warn("export {}: failed after {:.0f} s: {} (log: {})", model.name, outcome.seconds, reason,
            log_path);
  return ModelSupply{false, reason, log_path, outcome.seconds};
}

}  // namespace zoobench
