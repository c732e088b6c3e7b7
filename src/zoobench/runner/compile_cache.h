// The torch.compile caches of a run. By default a run compiles into a cache of its own: a fresh
// folder that every model process of the run shares (Inductor's FX graph cache and Triton's
// kernels), so a graph compiled once in the run (an accuracy check's, a second voted run's) is
// not compiled again, while nothing leaks in from earlier runs; it is removed when the run
// ends. --keep-compile-cache uses Inductor's and Triton's own caches (which outlive runs, as
// upstream's harness does by default); --cold-start-latency and --ci give every compile a fresh
// cache of its own (the Python side, tools/zoo_compile/session.py).
#pragma once

#include <string>

#include "zoobench/runner/run_options.h"

namespace zoobench {

class RunCompileCache {
 public:
  // Sets TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR in this process's environment, which the
  // run's processes inherit, before any embedded Python starts. Nothing for a run without a
  // torch.compile backend, one of the flags above, or a cache the environment already names.
  explicit RunCompileCache(const RunOptions& options);
  ~RunCompileCache();
  RunCompileCache(const RunCompileCache&) = delete;
  RunCompileCache& operator=(const RunCompileCache&) = delete;

  // The folder, "" when the run does not make one.
  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
};

}  // namespace zoobench
