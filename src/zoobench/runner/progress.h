// Progress of a suite run: on a terminal a live status line (done/total, elapsed, ETA,
// pass/fail counts, what each running model is doing); otherwise (CI, logs) one plain line per
// model. With start_board, a board of the running models' phases every so often, so that a long
// compile or a wait for the device shows while it lasts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench {

class Progress {
 public:
  Progress(std::size_t total, bool live, std::FILE* out = stderr);
  ~Progress();
  // `phase_file`: where the model's process writes its phase (util/crash_report.h), "" none.
  void started(const std::string& model, const std::string& device,
               const std::string& phase_file = "");
  // What a started model is doing before its process writes a phase (waiting for its export).
  void set_phase(const std::string& model, const std::string& device, const std::string& phase);
  // Every `every_s` seconds a line "pipelines: <model>@<device> <phase> (<for how long>) | ..."
  // (off a terminal; on one the live line carries the phases and is redrawn each second), until
  // close().
  void start_board(double every_s);
  // The board's line now ("" when nothing runs).
  std::string board_line();
  void finished(const std::string& model, const std::string& device, const std::vector<ResultRow>& rows,
                double seconds);
  // A job whose rows were set aside because it runs again later: a line, not counted as done.
  void set_aside(const std::string& model, const std::string& device,
                 const std::vector<ResultRow>& rows, double seconds);
  // A line that must not be overwritten by the live status (warnings, skips).
  void note(const std::string& line);
  void close();  // ends the live line and the board

 private:
  struct Running {
    std::string label;  // "model@device" (a device may run several at once)
    std::string phase_file;
    std::string phase;  // set_phase's, until the process writes one
    std::chrono::steady_clock::time_point since;
  };
  void redraw_locked();
  void print_line_locked(const std::string& line);  // a whole line above the live status
  std::string status_line_locked() const;
  void remove_running_locked(const std::string& label);
  std::vector<std::string> phases_locked() const;  // "<label> <phase> (<age>)" each
  void stop_board();

  std::size_t total_, done_ = 0, passed_ = 0, failed_ = 0;
  bool live_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Running> running_;
  std::mutex mutex_;
  std::thread board_;
  bool board_stop_ = false;
  std::condition_variable board_wake_;
};

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace zoobench
