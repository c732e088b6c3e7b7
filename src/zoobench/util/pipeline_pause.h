// A timed section with the host to itself. The device gate (device_gate.h) keeps other model
// pipelines off the device while a model is timed, but not off the CPUs: their compiles run on
// beside it, and a launch-bound eager side (a Python loop of small kernels) ran 5-16% slower
// there than in a run of one pipeline (docs/performance.md). With `--pause-pipelines` a timed
// section pauses the run's other pipelines on its device (SIGSTOP to each of their processes,
// compile workers included) and continues them (SIGCONT) when it ends, or after a bound,
// whichever is first. It is not the default: on the launch-bound models it was measured on it
// changed no eager latency (the slower eager sides of the one list run made with it came from
// the accuracy check's CUBLAS_WORKSPACE_CONFIG, util/compat.h; docs/performance.md). By
// default only a timing that came out unstable beside the others is taken again paused
// (perf/experiment.h, PerformanceOptions::retime_unstable).
//
// How a pipeline is found: each model process of a run announces itself in a file beside its
// phase file (crash_report.h), `<stem>.pipeline`, holding its process id and its device gate's
// path. The run's parent removes the file when the process ends and continues every pipeline
// still announced (continue_pipelines), so a timing process that dies mid-section leaves
// nothing stopped.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zoobench::pipeline_pause {

inline constexpr const char* kSuffix = ".pipeline";

// A pipeline of the run, as its file announces it.
struct Pipeline {
  std::string name;  // the file's stem (the model's log stem)
  pid_t pid = 0;
  std::string gate;  // its device gate's path
};

// Writes `path` announcing process `pid` on `gate` (whole, then renamed into place).
void write_announcement(const std::string& path, pid_t pid, const std::string& gate);

// This process is a model pipeline of a run (its parent named a phase file): announces it
// beside that file with `gate`, its device gate's path. Elsewhere nothing.
void announce(const std::string& gate);

// The folder this process's pipeline files are in ("" outside a run's model process).
std::string announcement_folder();

// The pipelines announced in `folder` on `gate` whose process is alive and a child of
// `parent` (the run's parent: a stale file whose process id was reused names another process,
// which is left alone), this process excluded.
std::vector<Pipeline> pipelines_on(const std::string& folder, const std::string& gate,
                                   pid_t parent);

// Pauses `pipelines` (each process and its descendants) while the object lives, at most
// `bound`: then they are continued even if the section has not ended (a section that waits on
// something a paused process holds, such as a compile cache's lock, goes on after the bound).
class Paused {
 public:
  Paused(const std::vector<Pipeline>& pipelines, std::chrono::milliseconds bound);
  ~Paused();
  Paused(const Paused&) = delete;
  Paused& operator=(const Paused&) = delete;

  // The pipelines paused (their names), and whether the bound ended the pause first.
  const std::vector<std::string>& names() const { return names_; }
  bool ended_by_bound() const;

 private:
  void continue_all();

  std::vector<std::string> names_;
  std::vector<pid_t> stopped_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  bool section_over_ = false, continued_ = false, by_bound_ = false;
  std::thread watchdog_;
};

// The run's parent, after a model process ends: continues every process announced in `folder`
// that is a child of this process, with its descendants (harmless for one that runs).
void continue_pipelines(const std::string& folder);

// `pid` and every process below it (children, their children, ...), from /proc.
std::vector<pid_t> process_tree(pid_t pid);

}  // namespace zoobench::pipeline_pause
