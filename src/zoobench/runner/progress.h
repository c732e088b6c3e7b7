// Progress of a suite run: on a terminal a live status line (done/total, elapsed, ETA,
// pass/fail counts, models running now); otherwise (CI, logs) one plain line per model.
#pragma once

#include <chrono>
#include <cstdio>
#include <set>
#include <mutex>
#include <string>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench {

class Progress {
 public:
  Progress(std::size_t total, bool live, std::FILE* out = stderr);
  void started(const std::string& model, const std::string& device);
  void finished(const std::string& model, const std::string& device, const std::vector<ResultRow>& rows,
                double seconds);
  // A job whose rows were set aside because it runs again later: a line, not counted as done.
  void set_aside(const std::string& model, const std::string& device,
                 const std::vector<ResultRow>& rows, double seconds);
  // A line that must not be overwritten by the live status (warnings, skips).
  void note(const std::string& line);
  void close();  // ends the live line

 private:
  void redraw_locked();
  void print_line_locked(const std::string& line);  // a whole line above the live status
  std::string status_line_locked() const;

  std::size_t total_, done_ = 0, passed_ = 0, failed_ = 0;
  bool live_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::multiset<std::string> running_;  // "model@device" (a device may run several at once)
  std::mutex mutex_;
};

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace zoobench
