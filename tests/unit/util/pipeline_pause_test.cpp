// Pausing the run's other pipelines for a timed section: real processes (forked children of the
// test, each counting in shared memory as fast as it can, one with a grandchild that counts
// too) announced in pipeline files as a run's model processes announce themselves. A paused
// process's count stands still; after the section, or after the bound, it moves again. Only
// the pipelines on the section's device gate and children of the run's parent are paused.
#include "zoobench/util/pipeline_pause.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "testing/testing.h"

namespace zoobench::pipeline_pause {
namespace {

using namespace std::chrono_literals;

// Counters in memory shared with the forked processes.
struct Counters {
  std::atomic<long> value[4];
};

class PipelinePauseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    void* memory = ::mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(memory, MAP_FAILED);
    counters = new (memory) Counters{};
  }
  void TearDown() override {
    for (pid_t pid : children) {
      ::kill(-pid, SIGKILL);  // the child's process group: its grandchild too
      ::waitpid(pid, nullptr, 0);
    }
    ::munmap(counters, sizeof(Counters));
  }

  // A child counting in slot `slot`, in a process group of its own as a run's model process;
  // with `grandchild_slot` >= 0 it first forks a grandchild counting there (in its group, so
  // that the test's end kills both).
  pid_t counting_child(int slot, int grandchild_slot = -1) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      if (grandchild_slot >= 0 && ::fork() == 0) count_forever(grandchild_slot);
      count_forever(slot);
    }
    ::setpgid(pid, pid);
    children.push_back(pid);
    return pid;
  }

  [[noreturn]] void count_forever(int slot) {
    for (;;) counters->value[slot].fetch_add(1, std::memory_order_relaxed);
  }

  // Whether slot's count moves within `wait`.
  bool moves(int slot, std::chrono::milliseconds wait = 150ms) const {
    const long before = counters->value[slot].load();
    std::this_thread::sleep_for(wait);
    return counters->value[slot].load() != before;
  }

  std::string announce_child(const std::string& name, pid_t pid, const std::string& gate) {
    const std::string path = dir.file(name + kSuffix);
    write_announcement(path, pid, gate);
    return path;
  }

  zoobench::testing::ScratchDir dir;
  Counters* counters = nullptr;
  std::vector<pid_t> children;
};

TEST_F(PipelinePauseTest, ASectionPausesThePipelinesOnItsGateWithTheirChildren) {
  const pid_t busy = counting_child(0, /*grandchild_slot=*/1);
  const pid_t other_device = counting_child(2);
  announce_child("BERT_pytorch", busy, "gate-cuda0");
  announce_child("resnet50", other_device, "gate-cuda1");
  ASSERT_TRUE(moves(0));
  ASSERT_TRUE(moves(1)) << "the grandchild did not start";
  const auto pipelines = pipelines_on(dir.path(), "gate-cuda0", ::getpid());
  ASSERT_EQ(pipelines.size(), 1u);
  EXPECT_EQ(pipelines[0].name, "BERT_pytorch");
  {
    Paused paused(pipelines, 10s);
    EXPECT_EQ(paused.names(), std::vector<std::string>{"BERT_pytorch"});
    EXPECT_FALSE(moves(0)) << "a paused pipeline ran on";
    EXPECT_FALSE(moves(1)) << "a paused pipeline's own child (a compile worker) ran on";
    EXPECT_TRUE(moves(2)) << "a pipeline on another device was paused";
  }
  EXPECT_TRUE(moves(0)) << "the pipeline was not continued after the section";
  EXPECT_TRUE(moves(1));
}

TEST_F(PipelinePauseTest, TheBoundContinuesThemBeforeTheSectionEnds) {
  const pid_t busy = counting_child(0);
  announce_child("hf_Bert", busy, "gate");
  Paused paused(pipelines_on(dir.path(), "gate", ::getpid()), 100ms);
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(moves(0)) << "the pause outlived its bound";
  EXPECT_TRUE(paused.ended_by_bound());
}

TEST_F(PipelinePauseTest, OnlyChildrenOfTheRunsParentAreTaken) {
  const pid_t busy = counting_child(0);
  announce_child("dcgan", busy, "gate");
  // A stale file naming a process id now someone else's (here: this test's own parent).
  announce_child("stale", ::getppid(), "gate");
  announce_child("broken", 0, "gate");
  EXPECT_TRUE(pipelines_on(dir.path(), "gate", ::getppid()).empty());
  const auto mine = pipelines_on(dir.path(), "gate", ::getpid());
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].pid, busy);
  EXPECT_TRUE(pipelines_on("", "gate", ::getpid()).empty());
}

TEST_F(PipelinePauseTest, TheParentContinuesWhatADeadSectionLeftStopped) {
  const pid_t busy = counting_child(0, /*grandchild_slot=*/1);
  announce_child("yolov3", busy, "gate");
  ASSERT_TRUE(moves(1)) << "the grandchild did not start";
  for (pid_t pid : process_tree(busy)) ::kill(pid, SIGSTOP);
  std::this_thread::sleep_for(20ms);
  ASSERT_FALSE(moves(0));
  ASSERT_FALSE(moves(1));
  continue_pipelines(dir.path());
  EXPECT_TRUE(moves(0));
  EXPECT_TRUE(moves(1));
}

TEST_F(PipelinePauseTest, NoPipelinesNothingPaused) {
  Paused paused({}, 10s);
  EXPECT_TRUE(paused.names().empty());
  EXPECT_FALSE(paused.ended_by_bound());
}

}  // namespace
}  // namespace zoobench::pipeline_pause
