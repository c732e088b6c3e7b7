// Progress lines.
#include "zoobench/runner/progress.h"

#include <fmt/format.h>

#include <algorithm>

#include "zoobench/report/joined_results.h"
#include "zoobench/report/number_format.h"
#include "zoobench/runner/run_summary.h"
#include "zoobench/util/characters.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/text.h"

namespace zoobench {

std::string format_duration(double seconds) {
  auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, static_cast<int>((s % 3600) / 60));
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, static_cast<int>(s % 60));
  return fmt::format("{}s", s);
}

Progress::Progress(std::size_t total, bool live, std::FILE* out)
    : total_(total), live_(live), out_(out), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { stop_board(); }

namespace {

// A model process's phase (util/crash_report.h) and its age in seconds; "" when it has none.
std::pair<std::string, double> read_phase(const std::string& path) {
  if (path.empty()) return {};
  const auto published = crash_report::read_published_phase(path);
  if (!published) return {};
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return {published->phase.substr(0, 120), std::max(0.0, now - published->since_s)};
}

}  // namespace

std::vector<std::string> Progress::phases_locked() const {
  std::vector<std::string> out;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& job : running_) {
    auto [phase, age] = read_phase(job.phase_file);
    if (phase.empty()) {
      phase = job.phase.empty() ? "starting" : job.phase;
      age = std::chrono::duration<double>(now - job.since).count();
    }
    out.push_back(fmt::format("{} {} ({})", job.label, phase, format_duration(age)));
  }
  return out;
}

std::string Progress::board_line() {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto phases = phases_locked();
  return phases.empty() ? std::string() : "pipelines: " + join(phases, " | ");
}

void Progress::start_board(double every_s) {
  stop_board();
  board_stop_ = false;
  board_ = std::thread([this, every_s] {
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(live_ ? 1.0 : every_s));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!board_wake_.wait_for(lock, period, [this] { return board_stop_; })) {
      if (live_) {
        redraw_locked();
        continue;
      }
      const auto phases = phases_locked();
      if (!phases.empty()) print_line_locked("pipelines: " + join(phases, " | "));
    }
  });
}

void Progress::stop_board() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    board_stop_ = true;
  }
  board_wake_.notify_all();
  if (board_.joinable()) board_.join();
}

void Progress::remove_running_locked(const std::string& label) {
  auto it = std::find_if(running_.begin(), running_.end(),
                         [&](const Running& job) { return job.label == label; });
  if (it != running_.end()) running_.erase(it);
}

std::string Progress::status_line_locked() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string eta = "?";
  if (done_ > 0 && done_ < total_)
    eta = format_duration(elapsed / static_cast<double>(done_) * (total_ - done_));
  if (done_ == total_) eta = "0s";
  const std::vector<std::string> running = phases_locked();
  return fmt::format("[{}/{}] {} elapsed, ETA {} | pass {} fail {} | {}", done_, total_,
                     format_duration(elapsed), eta, passed_, failed_,
                     running.empty() ? std::string("idle") : join(running, ", "));
}

void Progress::redraw_locked() {
  if (!live_) return;
  std::string line = status_line_locked();
  if (line.size() > 150) line = line.substr(0, 147) + "...";
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
}

void Progress::started(const std::string& model, const std::string& device,
                       const std::string& phase_file) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.push_back({model + "@" + device, phase_file, "", std::chrono::steady_clock::now()});
  redraw_locked();
}

void Progress::set_phase(const std::string& model, const std::string& device,
                         const std::string& phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& job : running_) {
    if (job.label == model + "@" + device) job.phase = phase;
  }
}

namespace {
// "accuracy=pass speedup=1.2x": what a job's rows say, for its progress line.
std::string row_summary(const std::vector<ResultRow>& rows) {
  std::vector<std::string> parts;
  for (const auto& row : rows) {
    if (row.kind == ExperimentKind::kAccuracy) {
      const std::string& layout = cell(row, columns::kInputLayout);
      parts.push_back("accuracy=" + std::string(status_name(row.status())) +
                      (layout.empty() || layout == kDefaultInputLayout ? "" : "[" + layout + "]"));
    } else {
      if (row.status() != Status::kPass) {
        parts.push_back("performance=" + std::string(status_name(row.status())));
        continue;
      }
      // An unstable speedup says so, how unstable, and how busy the host was.
      // As many digits as the interval allows (report/number_format.h).
      std::string text = "speedup=" + report::format_speedup(
                                          report::read_number(row, columns::kSpeedup),
                                          report::read_number(row, columns::kSpeedupCiLow),
                                          report::read_number(row, columns::kSpeedupCiHigh));
      if (cell(row, columns::kUnstable) == "1") {
        const std::string spread = speedup_spread(row), load = host_load();
        text += " \u2020unstable" + (spread.empty() ? "" : " " + spread) +
                (load.empty() ? "" : " (host " + load + ")");
      }
      parts.push_back(text);
    }
  }
  return join(parts, " ");
}
}  // namespace

void Progress::finished(const std::string& model, const std::string& device,
                        const std::vector<ResultRow>& rows, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  remove_running_locked(model + "@" + device);
  ++done_;
  bool all_pass = !rows.empty();
  for (const auto& row : rows) all_pass = all_pass && is_passing(row.status());
  (all_pass ? passed_ : failed_) += 1;
  print_line_locked(fmt::format("[{}/{}] {} {} {} ({})", done_, total_, model, device,
                                row_summary(rows), format_duration(seconds)));
}

void Progress::set_aside(const std::string& model, const std::string& device,
                         const std::vector<ResultRow>& rows, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  remove_running_locked(model + "@" + device);
  print_line_locked(fmt::format("[{}/{}] {} {} {} ({}): set aside, it runs again alone", done_,
                                total_, model, device, row_summary(rows),
                                format_duration(seconds)));
}

void Progress::print_line_locked(const std::string& raw) {
  // A line is made of model names and statuses read from files: their control characters
  // (a terminal escape in a folder's name) are shown as '?', never sent to the terminal.
  const std::string line = terminal_safe(raw);
  if (live_) {
    std::fprintf(out_, "\r\033[K%s\n", line.c_str());
    redraw_locked();
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void Progress::note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  print_line_locked(line);
}

void Progress::close() {
  stop_board();
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_) {
    std::fprintf(out_, "\r\033[K%s\n", status_line_locked().c_str());
    std::fflush(out_);
  }
}

}  // namespace zoobench
