// The order a suite run starts its jobs in. With several pipelines a run ends when its last job
// does: a long model started late runs on alone while the other pipelines sit idle (the
// torchbench list's training took 22 min where its jobs' seconds over four pipelines come to
// 12). The models a suite's yaml names under zoobench.start_first, its longest on one GPU, start
// first, in that list's order; the others follow in the selection's order. A worker then takes
// the first queued job that may start on its device now (first_startable).
#pragma once

#include <deque>
#include <functional>
#include <string>

#include "zoobench/runner/job_plan.h"

namespace zoobench {

// `jobs` reordered: those of start_first models first, by their start_rank (models of several
// suites: the first of each suite, then the second, ...), then the rest as they were. A model's jobs stay together and in their order (its backends one after another).
std::deque<JobPlan> longest_first(std::deque<JobPlan> jobs);

// The line a run prints at its start about the order: the models it starts first, or "" when
// none of its jobs' models is in its suite's start_first.
std::string start_order_line(const std::deque<JobPlan>& ordered);

// The first of `queued` that a worker may start now on its device: one that `fits` (the time
// budget), and not a memory_heavy one while another runs on that device (zoobench.memory_heavy:
// two of them beside each other run out of the device's memory, and one then runs again alone
// at the end of the run). end() when none may.
std::deque<JobPlan>::iterator first_startable(std::deque<JobPlan>& queued,
                                             bool memory_heavy_running,
                                             const std::function<bool(const JobPlan&)>& fits);

}  // namespace zoobench
