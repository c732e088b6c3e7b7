// How a model's process ends (runner/child_process.h): a child that dies of SIGTERM alone is a
// crash; one that dies of SIGTERM while zoobench itself is being interrupted (scancel signals
// every process of the job, the child's signal may land first) was interrupted and gets no row.
#include "zoobench/runner/child_process.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "testing/testing.h"

namespace zoobench {
namespace {

const std::vector<std::string> kKillsItself = {"/bin/sh", "-c", "kill -TERM $$"};

TEST(ChildProcess, SigtermWithoutAnInterruptIsACrash) {
  testing::ScratchDir dir;
  std::atomic<bool> interrupt{false};
  ChildOutcome outcome = run_child(kKillsItself, dir.file("child.log"), 0, interrupt);
  EXPECT_EQ(outcome.kind, ChildOutcome::Kind::kSignaled);
  EXPECT_EQ(outcome.signal, SIGTERM);
}

TEST(ChildProcess, SigtermBeforeTheParentsOwnSignalIsAnInterrupt) {
  testing::ScratchDir dir;
  std::atomic<bool> interrupt{false};
  // The parent's SIGTERM handler sets the flag a moment after the child died of its SIGTERM.
  std::thread parent_signal([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    interrupt.store(true);
  });
  ChildOutcome outcome = run_child(kKillsItself, dir.file("child.log"), 0, interrupt);
  parent_signal.join();
  EXPECT_EQ(outcome.kind, ChildOutcome::Kind::kInterrupted);
}

TEST(ChildProcess, ACrashDuringAnInterruptIsStillACrash) {
  testing::ScratchDir dir;
  std::atomic<bool> interrupt{false};
  // (Late enough that the child has surely died first, even on a loaded machine.)
  std::thread parent_signal([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    interrupt.store(true);
  });
  ChildOutcome outcome =
      run_child({"/bin/sh", "-c", "kill -SEGV $$"}, dir.file("child.log"), 0, interrupt);
  parent_signal.join();
  EXPECT_EQ(outcome.kind, ChildOutcome::Kind::kSignaled);
  EXPECT_EQ(outcome.signal, SIGSEGV);
}

}  // namespace
}  // namespace zoobench
