// Jobs reordered so that the longest start first.
#include "zoobench/runner/job_order.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace zoobench {

std::deque<JobPlan> longest_first(std::deque<JobPlan> jobs,
                                  const std::map<std::string, SuiteConfig>& configs) {
  auto rank = [&configs](const JobPlan& job) {
    auto config = configs.find(job.entry.suite);
    std::optional<std::size_t> place;
    if (config != configs.end()) place = config->second.start_rank(job.entry.name);
    return place.value_or(std::numeric_limits<std::size_t>::max());
  };
  std::vector<JobPlan> ordered(std::make_move_iterator(jobs.begin()),
                               std::make_move_iterator(jobs.end()));
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const JobPlan& a, const JobPlan& b) { return rank(a) < rank(b); });
  return {std::make_move_iterator(ordered.begin()), std::make_move_iterator(ordered.end())};
}

std::deque<JobPlan>::iterator first_startable(std::deque<JobPlan>& queued,
                                             bool memory_heavy_running,
                                             const std::function<bool(const JobPlan&)>& fits) {
  return std::find_if(queued.begin(), queued.end(), [&](const JobPlan& job) {
    return !(job.memory_heavy && memory_heavy_running) && fits(job);
  });
}

}  // namespace zoobench
