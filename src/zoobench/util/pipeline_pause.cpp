// Pausing a run's other pipelines during a timed section (pipeline_pause.h).
#include "zoobench/util/pipeline_pause.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "zoobench/util/crash_report.h"
#include "zoobench/util/text.h"

namespace zoobench::pipeline_pause {
namespace {

struct ProcessState {
  char state = '?';  // R, S, D, T (stopped), t, Z, ...
  pid_t parent = 0;
};

// From /proc/<pid>/stat: the fields after the command's closing parenthesis (the command itself
// may hold spaces and parentheses).
std::optional<ProcessState> process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  ProcessState state;
  if (!(fields >> state.state >> state.parent)) return std::nullopt;
  return state;
}

// Every process's parent, from /proc (opendir: util/files.h says why not std::filesystem's).
std::map<pid_t, std::vector<pid_t>> children_by_parent() {
  std::map<pid_t, std::vector<pid_t>> children;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (auto state = process_state(static_cast<pid_t>(pid)))
      children[state->parent].push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return children;
}

std::optional<Pipeline> read_announcement(const std::string& folder, const std::string& file) {
  std::ifstream in(folder + "/" + file);
  Pipeline pipeline;
  long pid = 0;
  if (!(in >> pid) || pid <= 0 || !std::getline(in >> std::ws, pipeline.gate)) return std::nullopt;
  pipeline.pid = static_cast<pid_t>(pid);
  pipeline.name = file.substr(0, file.size() - std::string(kSuffix).size());
  return pipeline;
}

std::vector<Pipeline> announced_in(const std::string& folder) {
  std::vector<Pipeline> out;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() <= std::string(kSuffix).size() || !ends_with(name, kSuffix)) continue;
    if (auto pipeline = read_announcement(folder, name)) out.push_back(*pipeline);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end(),
            [](const Pipeline& a, const Pipeline& b) { return a.name < b.name; });
  return out;
}

bool is_child_of(pid_t pid, pid_t parent) {
  const auto state = process_state(pid);
  return state && state->parent == parent && state->state != 'Z';
}

// The phase file's stem (crash_report.h's variable), or "" outside a run's model process.
std::string phase_stem() {
  const char* phase = std::getenv(crash_report::kPhaseFileVariable);
  if (phase == nullptr || *phase == '\0') return "";
  std::string stem = phase;
  const std::string suffix = ".phase";
  if (ends_with(stem, suffix)) stem.resize(stem.size() - suffix.size());
  return stem;
}

// Waits (briefly) until each of `pids` is stopped, so the section does not start beside a
// process still on its way to the signal.
void await_stopped(const std::vector<pid_t>& pids) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  for (pid_t pid : pids) {
    while (std::chrono::steady_clock::now() < until) {
      const auto state = process_state(pid);
      if (!state || state->state == 'T' || state->state == 't' || state->state == 'Z') break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

}  // namespace

void write_announcement(const std::string& path, pid_t pid, const std::string& gate) {
  const std::string staged = path + ".next";
  {
    std::ofstream out(staged, std::ios::trunc);
    out << pid << '\t' << gate << '\n';
    if (!out) return;
  }
  std::rename(staged.c_str(), path.c_str());
}

void announce(const std::string& gate) {
  const std::string stem = phase_stem();
  if (stem.empty() || gate.empty()) return;
  write_announcement(stem + kSuffix, ::getpid(), gate);
}

std::string announcement_folder() {
  const std::string stem = phase_stem();
  if (stem.empty()) return "";
  const auto slash = stem.rfind('/');
  return slash == std::string::npos ? "." : stem.substr(0, slash);
}

std::vector<Pipeline> pipelines_on(const std::string& folder, const std::string& gate,
                                   pid_t parent) {
  std::vector<Pipeline> out;
  if (folder.empty()) return out;
  for (auto& pipeline : announced_in(folder)) {
    if (pipeline.pid == ::getpid() || pipeline.gate != gate) continue;
    if (is_child_of(pipeline.pid, parent)) out.push_back(std::move(pipeline));
  }
  return out;
}

std::vector<pid_t> process_tree(pid_t pid) {
  const auto children = children_by_parent();
  std::vector<pid_t> tree = {pid};
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const auto found = children.find(tree[i]);
    if (found == children.end()) continue;
    tree.insert(tree.end(), found->second.begin(), found->second.end());
  }
  return tree;
}

Paused::Paused(const std::vector<Pipeline>& pipelines, std::chrono::milliseconds bound) {
  if (pipelines.empty()) return;
  std::set<pid_t> stopped;
  // The pipelines first, so that none starts another process meanwhile; then what is below
  // them, looked up again once more for a process started just before its parent stopped.
  for (const auto& pipeline : pipelines) {
    if (::kill(pipeline.pid, SIGSTOP) == 0) {
      stopped.insert(pipeline.pid);
      names_.push_back(pipeline.name);
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& pipeline : pipelines) {
      if (!stopped.count(pipeline.pid)) continue;
      for (pid_t pid : process_tree(pipeline.pid))
        if (!stopped.count(pid) && ::kill(pid, SIGSTOP) == 0) stopped.insert(pid);
    }
  }
  stopped_.assign(stopped.begin(), stopped.end());
  await_stopped(stopped_);
  if (stopped_.empty()) return;
  watchdog_ = std::thread([this, bound] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!ended_.wait_for(lock, bound, [this] { return section_over_; })) by_bound_ = true;
    lock.unlock();
    continue_all();
  });
}

Paused::~Paused() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    section_over_ = true;
  }
  ended_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  continue_all();
}

bool Paused::ended_by_bound() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_bound_;
}

void Paused::continue_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (continued_) return;
  continued_ = true;
  for (pid_t pid : stopped_) ::kill(pid, SIGCONT);
}

void continue_pipelines(const std::string& folder) {
  for (const auto& pipeline : announced_in(folder)) {
    if (!is_child_of(pipeline.pid, ::getpid())) continue;
    for (pid_t pid : process_tree(pipeline.pid)) ::kill(pid, SIGCONT);
  }
}

}  // namespace zoobench::pipeline_pause
