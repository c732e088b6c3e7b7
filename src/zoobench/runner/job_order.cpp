// Jobs reordered so that the longest start first.
#include "zoobench/runner/job_order.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "zoobench/util/text.h"

namespace zoobench {

std::deque<JobPlan> longest_first(std::deque<JobPlan> jobs) {
  auto rank = [](const JobPlan& job) {
    return job.start_rank.value_or(std::numeric_limits<std::size_t>::max());
  };
  std::vector<JobPlan> ordered(std::make_move_iterator(jobs.begin()),
                               std::make_move_iterator(jobs.end()));
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const JobPlan& a, const JobPlan& b) { return rank(a) < rank(b); });
  return {std::make_move_iterator(ordered.begin()), std::make_move_iterator(ordered.end())};
}

std::string start_order_line(const std::deque<JobPlan>& ordered) {
  std::vector<std::string> first;
  for (const auto& job : ordered) {
    if (!job.start_rank) continue;
    if (first.empty() || first.back() != job.entry.name) first.push_back(job.entry.name);
  }
  if (first.empty()) return "";
  return "started first, as the suite's longest (zoobench.start_first): " + join(first, ", ");
}

std::deque<JobPlan>::iterator first_startable(std::deque<JobPlan>& queued,
                                             bool memory_heavy_running,
                                             const std::function<bool(const JobPlan&)>& fits) {
  return std::find_if(queued.begin(), queued.end(), [&](const JobPlan& job) {
    return !(job.memory_heavy && memory_heavy_running) && fits(job);
  });
}

}  // namespace zoobench
