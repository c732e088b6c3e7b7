// Reading a crash report back from a model's log (util/crash_report.h); the report itself is
// written by a real crash in the integration test of the faulty zoo, and by the crashes below
// (each in a forked child: gtest's death tests).
#include "zoobench/util/crash_report.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include "testing/testing.h"
#include "zoobench/util/log.h"
#include "zoobench/util/symbolizer.h"

namespace zoobench::crash_report {
namespace {

TEST(CrashReport, LastReportAfterTheOffsetIsFound) {
  testing::ScratchDir dir;
  const std::string log = dir.file("model.log");
  std::ofstream(log) << "zoobench info: loading\n"
                     << kLinePrefix << "SIGSEGV during accuracy: jit run\n"
                     << "  model: m (jit, inference, float32, cuda:0)\n";
  EXPECT_EQ(crash_line_from_log(log), "SIGSEGV during accuracy: jit run");
  const auto first_run_end = static_cast<int64_t>(std::ifstream(log, std::ios::ate).tellg());
  // A later run of the same model in the same log, that left no report (SIGKILL) ...
  std::ofstream(log, std::ios::app) << "zoobench info: loading again\n";
  EXPECT_EQ(crash_line_from_log(log, first_run_end), "");
  // ... and one that did.
  std::ofstream(log, std::ios::app) << kLinePrefix << "SIGABRT during performance: jit prepare\n";
  EXPECT_EQ(crash_line_from_log(log, first_run_end), "SIGABRT during performance: jit prepare");
  EXPECT_EQ(crash_line_from_log(dir.file("missing.log")), "");
}

TEST(CrashReport, APhaseThatEndsLogsHowLongItLasted) {
  const zoobench::log::Level level = zoobench::log::current_level();
  zoobench::log::set_level(zoobench::log::Level::kInfo);
  set_phase("phase test: before");
  ::testing::internal::CaptureStderr();
  set_phase("phase test: slow");
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  set_phase("phase test: after");
  const std::string logged = ::testing::internal::GetCapturedStderr();
  zoobench::log::set_level(level);
  const std::string marker = "phase 'phase test: slow' took ";
  const std::size_t at = logged.find(marker);
  ASSERT_NE(at, std::string::npos) << logged;
  EXPECT_GE(std::stod(logged.substr(at + marker.size())), 0.119) << logged;
}

// A call through a null function pointer leaves the unwinder no frame to walk (the backtrace
// ends at the signal frame, as a crash on the H200 did): the report names the caller instead.
TEST(CrashReportDeathTest, ACallThroughANullPointerNamesItsCaller) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        install();
        void (*volatile function)() = nullptr;
        function();
      },
      "SIGSEGV\n  faulting address: 0x0, pc 0x0 \\(a jump to no code[^\n]*\n  called from:\n[^\n]+\n"
      "  native backtrace");
}

TEST(CrashReportDeathTest, AWriteThroughANullPointerGivesTheAddressAndThePc) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        install();
        int* volatile pointer = nullptr;
        *pointer = 1;
      },
      "SIGSEGV\n  faulting address: 0x0, pc 0x[0-9a-f]+\n  native backtrace");
}

// A worker stopped at its --timeout says in which phase, and still dies of SIGTERM (its parent
// tells a timeout from a crash by that); a crash report is not taken for it.
TEST(CrashReportDeathTest, AWorkerStoppedBySigtermNamesItsPhase) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        report_termination();
        set_phase("accuracy: jit run");
        ::raise(SIGTERM);
      },
      ::testing::KilledBySignal(SIGTERM),
      "zoobench stopped: SIGTERM during accuracy: jit run\n[^\n]*native backtrace");
}

__attribute__((noinline)) void crash_in_a_named_function(int* volatile* where) { **where = 1; }

// The frames are named and demangled (libbacktrace and libstdc++'s demangler), and the process
// still dies of the signal it got.
TEST(CrashReportDeathTest, FramesAreNamedAndDemangled) {
  if (!zoobench::symbolizer::available()) GTEST_SKIP() << "built without libbacktrace";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install();
        int* volatile pointer = nullptr;
        crash_in_a_named_function(&pointer);
      },
      ::testing::KilledBySignal(SIGSEGV),
      "native backtrace \\(most recent call first\\):\n(    #[^\n]*\n)*    #[0-9 ]+0x[0-9a-f]+ "
      "zoobench::crash_report::\\(anonymous namespace\\)::crash_in_a_named_function\\(int\\* "
      "volatile\\*\\) \\+ 0x[0-9a-f]+\n");
}

TEST(CrashReport, AStopReportIsReadWithItsOwnPrefix) {
  testing::ScratchDir dir;
  const std::string log = dir.file("model.log");
  std::ofstream(log) << kStopLinePrefix << "SIGTERM during accuracy: jit run\n";
  EXPECT_EQ(crash_line_from_log(log, 0, kStopLinePrefix), "SIGTERM during accuracy: jit run");
  EXPECT_EQ(crash_line_from_log(log), "");  // not a crash
}

}  // namespace
}  // namespace zoobench::crash_report
