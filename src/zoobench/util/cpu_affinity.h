// The CPUs a process may run on (Linux affinity), for `zoobench run --cpu-affinity` and for
// the record of where a measurement ran. Launch-bound timings are host time, and on the H200 VM
// (2026-11-30) keeping every process on one CPU took the 3-run spread of a batch-64 training
// step from 22.4% to 0.6% (docs/performance.md).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace zoobench {

// taskset's list syntax: "4", "2-5,8". Sorted, without repeats. Throws UsageError for anything
// else (empty, a reversed range, a negative or too large number).
std::vector<int> parse_cpu_list(const std::string& text);

// The inverse: {0, 1, 2, 3, 8} -> "0-3,8".
std::string format_cpu_list(const std::vector<int>& cpus);

// The CPUs the calling process may run on now (sched_getaffinity); empty if unreadable.
std::vector<int> current_cpu_affinity();

// The first hardware thread of the CPU's core (thread_siblings_list in sysfs), or the CPU itself
// where the kernel does not say.
int first_thread_of_core(int cpu);

// `cpus` with the hardware threads of each core next to each other (cores in the order of their
// first thread), so that consecutive shares (worker_cpu_share) hold whole cores where their
// sizes allow: a timing process's thread then shares no core with another pipeline's compile.
// `core_of` gives a CPU's core (its first thread).
std::vector<int> cores_together(const std::vector<int>& cpus,
                                const std::function<int(int)>& core_of = first_thread_of_core);

// Worker `worker` of `workers`' share of `cpus`: consecutive, as equal as can be, earlier
// workers taking the larger shares. Throws UsageError when there are fewer CPUs than workers.
std::vector<int> worker_cpu_share(const std::vector<int>& cpus, std::size_t worker, std::size_t workers);

}  // namespace zoobench
