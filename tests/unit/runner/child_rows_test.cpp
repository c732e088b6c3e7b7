// The rows the parent makes for what a model's process did not report (runner/child_rows.h), and
// when a process that checks and then times its model ended before the timing started.
#include "zoobench/runner/child_rows.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

// A job that checks its model at upstream's batch size 4 and then times it, in one process.
JobPlan check_then_time(const std::string& zoo) {
  JobPlan job;
  job.entry = ZooEntry{"torchbench", "m", zoo + "/torchbench/m/manifest.json"};
  job.backend = "inductor";
  job.accuracy = job.performance = true;
  job.input_layouts = {"contiguous"};
  job.zoo_dir = zoo;
  job.accuracy_batch = 4;
  job.timeout_s = 60;
  return job;
}

ChildOutcome timed_out() {
  ChildOutcome outcome;
  outcome.kind = ChildOutcome::Kind::kTimedOut;
  return outcome;
}

ResultRow own_check_row(const JobPlan& job) {
  RowContext c = context_for(job, "cuda", "");
  return failure_row(ExperimentKind::kAccuracy, Status::kFailAccuracy, "its own verdict", c);
}

TEST(ChildRows, AProcessThatEndedDuringTheCheckLeftItsTimingUnstarted) {
  zoobench::testing::ScratchDir dir;
  const JobPlan job = check_then_time(dir.file("zoo"));
  const std::string log = dir.file("m.log");
  std::ofstream{log};  // the child's log, empty: it wrote nothing
  // Nothing reported: both rows are the parent's, from the timeout.
  const auto rows = complete_rows(job, "cuda", log, {}, timed_out());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(ended_before_timing(job, rows));
  // The check's row, made for a model that was not exported yet, gives the check's batch size.
  for (const auto& row : rows) {
    if (row.kind == ExperimentKind::kAccuracy) {
      EXPECT_EQ(cell(row, columns::kBatchSize), "4");
    }
  }

  // The check reported its own row: the timing started and is what ended.
  const auto timed = complete_rows(job, "cuda", log, {own_check_row(job)}, timed_out());
  ASSERT_EQ(timed.size(), 2u);
  EXPECT_FALSE(ended_before_timing(job, timed));

  // A job whose check and timing were never in one process, or that did not time: not this.
  JobPlan separate = job;
  separate.accuracy_batch = 0;
  EXPECT_FALSE(ended_before_timing(separate, complete_rows(separate, "cuda", log, {}, timed_out())));
  JobPlan check_only = job;
  check_only.performance = false;
  EXPECT_FALSE(ended_before_timing(check_only, complete_rows(check_only, "cuda", log, {}, timed_out())));
}

// PyTorch 2.11's message for hf_GPT2_large's eager training step on an H100 (2026-12-08), run
// again alone while another zoobench command's four models held the rest of the GPU.
const char kOomBesideOthers[] =
    "eager: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 MiB. GPU 0 has a "
    "total capacity of 79.18 GiB of which 17.81 MiB is free. Including non-PyTorch memory, this "
    "process has 39.02 GiB memory in use. Process 8689 has 19.43 GiB memory in use. Process 8691 "
    "has 5.54 GiB memory in use. Process 8690 has 10.73 GiB memory in use. Process 8692 has 4.41 "
    "GiB memory in use. Of the allocated memory 35.89 GiB is allocated by PyTorch, and 2.46 GiB "
    "is reserved by PyTorch but unallocated.";

TEST(ChildRows, AnOutOfMemoryRowSaysHowMuchOtherProcessesHeld) {
  const JobPlan job = check_then_time("zoo");
  const RowContext c = context_for(job, "cuda", "");
  std::vector<ResultRow> rows = {
      failure_row(ExperimentKind::kAccuracy, Status::kEager2ndRunOOM, kOomBesideOthers, c),
      // the model's own need: its message names no other process
      failure_row(ExperimentKind::kAccuracy, Status::kOOM,
                  "inductor: torch.AcceleratorError: CUDA error: out of memory", c),
      // not memory, though its message names a process
      failure_row(ExperimentKind::kAccuracy, Status::kFailToRun, "Process 12 has 3.00 GiB", c)};
  note_memory_of_other_processes(rows);
  // 19.43 + 5.54 + 10.73 + 4.41 GiB: the four others, not the failing process's own 39.02
  EXPECT_EQ(cell(rows[0], columns::kReason).rfind("other processes held 40.1 GiB of the GPU", 0),
            0u)
      << cell(rows[0], columns::kReason);
  EXPECT_NE(cell(rows[0], columns::kReason).find(kOomBesideOthers), std::string::npos);
  EXPECT_EQ(cell(rows[1], columns::kReason),
            "inductor: torch.AcceleratorError: CUDA error: out of memory");
  EXPECT_EQ(cell(rows[2], columns::kReason), "Process 12 has 3.00 GiB");
}

}  // namespace
}  // namespace zoobench
