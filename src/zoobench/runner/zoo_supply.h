// Export on demand for a run (`zoobench run` without --no-export): one thread runs the exporter
// (tools/export_zoo.py) as a child process for each model the run's jobs need and the zoo lacks,
// in job order and ahead of the workers, one export at a time, each under the run's --timeout
// with its log beside the models' (<logs>/<model>.export.log). With --zoo-max-gb it deletes the
// folders of models whose jobs have all delivered their rows, least recently finished first,
// so the zoo stays under the budget; an export waits for room while a model it would crowd out
// is still running. It deletes only models this run exported (the zoo lacked them when it
// started), never one exported before it or by hand, and never one another run or exporter is
// using or exporting (zoo/zoo_locks.h): from its start to its last job the run holds each of its
// models' use locks shared.
//
// A timing never shares the device with an export (an export's builds, tracing and checks would
// spoil its numbers): the exporter holds the first device's gate shared (util/device_gate.h;
// request.device_gate) while it builds, runs and saves a model, and a model's timed section
// holds it alone, so exports overlap the models' loading, compiling and accuracy checks but no
// timing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/export_request.h"
#include "zoobench/zoo/zoo_locks.h"

namespace zoobench {

struct SupplySettings {
  ExportRequest request;
  std::string python;    // the interpreter that runs the exporter
  std::string exporter;  // tools/export_zoo.py
  std::string logs_dir;
  double timeout_s = 0;     // per export (0: none)
  double max_bytes = 0;     // --zoo-max-gb in bytes (0: no budget)
  std::size_t ahead = 2;    // models exported that no worker has asked for yet, at most
  // The models' own processes export what the run needs (runner/recipe_export.h): every model
  // is ready at once and no exporter runs here.
  bool exports_in_model_processes = false;
  // Where those processes also export each model's check at upstream's batch size (a run with
  // RunOptions::accuracy_batch_here; "" none): such a folder goes with the model's, within the
  // same budget.
  std::string check_zoo_dir;
};

// What the run gets for a model once its export is settled.
struct ModelSupply {
  bool ready = false;
  std::string reason;  // not ready: why (the exporter's own reason where it gave one)
  std::string log;     // the export's log, "" when none ran
  double seconds = 0;  // the export's, when one ran
};

class ZooSupply {
 public:
  // `models`: each model once, in the order the jobs will ask for them; `jobs_per_model`: how
  // many jobs each has (a model may go once all of them delivered). Models whose entry already
  // serves the run are ready at once; the thread exports the others.
  ZooSupply(SupplySettings settings, std::vector<ZooEntry> models,
            std::map<std::string, int> jobs_per_model, const std::atomic<bool>& interrupted);
  ~ZooSupply();  // stops the thread; an export under way is interrupted
  ZooSupply(const ZooSupply&) = delete;
  ZooSupply& operator=(const ZooSupply&) = delete;

  // Blocks until the model's export is settled (or the run is interrupted: not ready).
  ModelSupply await(const ZooEntry& model);
  // One of the model's jobs delivered its rows; after the last, its folder may be evicted.
  void job_done(const ZooEntry& model);
  bool exports_in_model_processes() const { return settings_.exports_in_model_processes; }
  const ExportRequest& request() const { return settings_.request; }

 private:
  static std::string key(const ZooEntry& model) { return model.suite + "/" + model.name; }
  void run_exports();
  bool wait_for_room(std::unique_lock<std::mutex>& lock);
  ZooEntry take_next_locked();
  double evict_finished_locked();
  double evict_folder(const std::string& zoo_dir, const ZooEntry& model);
  ModelSupply export_model(const ZooEntry& model);

  SupplySettings settings_;
  std::deque<ZooEntry> to_export_;
  std::map<std::string, int> jobs_left_;
  std::map<std::string, ModelSupply> settled_;
  std::deque<ZooEntry> finished_;       // evictable, least recently finished first
  std::set<std::string> owned_;         // exported by this run (the zoo lacked them at its start)
  std::set<std::string> owned_checks_;  // likewise in settings_.check_zoo_dir
  std::map<std::string, ModelUseLock> in_use_;  // held until the model's last job delivered
  std::set<std::string> unclaimed_;     // exported by this run, not yet asked for by a worker
  std::multiset<std::string> awaited_;  // models workers are blocked on now
  std::size_t exported_running_ = 0;    // exported by this run, jobs still to deliver
  bool stopping_ = false;
  bool over_budget_warned_ = false;
  const std::atomic<bool>& interrupted_;
  std::atomic<bool> stop_export_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread thread_;
};

// The bytes of every file under `folder` (0 when it does not exist).
double folder_bytes(const std::string& folder);

}  // namespace zoobench
