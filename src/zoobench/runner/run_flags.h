// The flags of `zoobench run`, in one table (run_flags.cpp): the CLI adds them to its
// subcommand, and the suite runner derives each child's command line from what was parsed, so
// a new flag reaches the per-model child without anyone having to remember it. A flag is either
// forwarded to the child as the user gave it or decided by the parent for each child
// (parent_decided_flags); a test checks that every flag is one of the two. Upstream's flags that
// zoobench has no flag for are refused with what zoobench offers instead (refused_upstream_flags).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"

namespace zoobench {

// What the flags fill: the options, and the flags that need a second step to become options.
struct RunFlags {
  RunOptions options;
  bool training = false, inference = false;
  bool float32 = false, float16 = false, bfloat16 = false, amp = false;
  bool disable_cudagraphs = false, no_patches = false, ignore_suite_switches = false;
  std::string backends = "jit";
  std::vector<std::string> devices = {"cpu"};
  std::string cpu_affinity;
  std::string input_layouts;
  std::string compile_options;
  std::string disabled_switches;
  double tol = -1;
  std::vector<std::string> tolerance;  // upstream's mode flag; a value is the old numeric form
  bool inductor = false, ci = false, cold_start_latency = false, quiet = false, verbose = false;
  bool no_export = false;
  std::string output_format = "zoobench";
  int64_t batch_size = 0;
  double lr = 0.01;
};

// Adds every `zoobench run` flag to `command`, bound to `flags`.
void add_run_flags(CLI::App& command, RunFlags& flags);

// After parsing: checks the combinations (UsageError naming what is wrong) and completes
// flags.options, including options.child_flags (what the user gave that a child must see too).
void finish_run_flags(const CLI::App& command, RunFlags& flags);

// The flags the parent decides for each child (its model, device, backend, experiments,
// outputs, ...): never forwarded as given.
const std::vector<std::string>& parent_decided_flags();

// An upstream flag (benchmarks/dynamo/common.py) that zoobench has no flag for. add_run_flags
// takes it (hidden, with or without a value) so that finish_run_flags refuses it (exit 2) naming
// zoobench's way to the same end, instead of CLI11's "The following argument was not expected".
struct RefusedUpstreamFlag {
  std::string names;    // CLI11's spelling: "--threads,-t"
  std::string instead;  // what zoobench offers, or why it does not
};
const std::vector<RefusedUpstreamFlag>& refused_upstream_flags();

// What zoobench does of upstream's --ci and what it does not, as the run prints it once at its
// start.
std::string upstream_ci_effects(const RunOptions& options);

}  // namespace zoobench
