// Named, scoped device adaptations ("patches") applied through LibTorch's dispatcher.
// A patch registers operator kernels (and new operators) when applied and unregisters them
// when its scope ends, and may rewrite a loaded module's TorchScript graphs. Patches are
// declared in C++ in one table (registry.cpp); suites assign them to models by name.
#pragma once

#include <torch/library.h>
#include <torch/script.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace zoobench::patches {

// One kernel a patch registers: operator name ("torchvision::nms") and dispatch key.
struct OperatorOverride {
  std::string op;
  c10::DispatchKey key;
};

// RAII registrations: destroying a torch::Library unregisters everything it registered.
using Registrations = std::vector<std::unique_ptr<torch::Library>>;

struct Patch {
  std::string name;
  std::string description;                  // one line
  std::vector<OperatorOverride> overrides;  // kernels registered while active
  std::vector<std::string> defines;         // operators it declares ("torchvision::nms")
  std::vector<std::string> rewrites;        // graph rewrites, e.g. "aten::dropout -> ..."
  std::string applies;                      // when: "at load", "at load, training models"
  bool training_only = false;               // rewrite only models loaded for training
  // Rewrite only the module of the backend under test, never the eager reference's or the
  // float64 golden run's (BackendRequest::after_load_compiled): planted faults for tests of
  // `zoobench bisect`. Its operator registrations, if any, are process-wide as always.
  bool compiled_only = false;
  // Registers the kernels and operators above; may skip ones another library already provides.
  std::function<Registrations()> apply;
  // Rewrites a loaded module; returns the number of sites changed. Empty if none.
  std::function<int(torch::jit::Module&)> rewrite;
};

// "op[key,key]; op[key]" for listings.
std::string describe_overrides(const Patch& patch);

// A table of patches and which of them are active in this process. Not copyable: it owns the
// registrations. builtin() holds zoobench's own table; tests build their own.
class PatchRegistry {
 public:
  explicit PatchRegistry(std::vector<Patch> patches);
  PatchRegistry(const PatchRegistry&) = delete;
  PatchRegistry& operator=(const PatchRegistry&) = delete;
  ~PatchRegistry();

  static PatchRegistry& builtin();

  const std::vector<Patch>& patches() const { return patches_; }
  // nullptr if unknown.
  const Patch* find(const std::string& name) const;
  // Active patch names in the order they were first applied.
  std::vector<std::string> active() const;

  // Applies each named patch not yet active, or counts one more user of an active one.
  // Throws UsageError for an unknown name (listing the known ones) and std::runtime_error
  // when two patches override the same operator for the same dispatch key (naming both);
  // on error nothing from this call stays applied.
  void acquire(const std::vector<std::string>& names);
  // Drops one use of each; a patch with no user left is unregistered.
  void release(const std::vector<std::string>& names);

 private:
  struct Active {
    int uses = 0;
    Registrations registrations;
  };
  void check_conflicts(const Patch& patch) const;

  std::vector<Patch> patches_;
  mutable std::mutex mutex_;
  std::map<std::string, Active> active_;
  std::vector<std::string> order_;
};

// Applies patches for a model's lifetime: construct before loading the model, destroy after
// the model and everything that ran it (graph executors hold the registered operators). The
// caller implements --no-patches by not constructing one (or passing no names).
class PatchScope {
 public:
  explicit PatchScope(std::vector<std::string> names,
                      PatchRegistry& registry = PatchRegistry::builtin());
  ~PatchScope();
  PatchScope(const PatchScope&) = delete;
  PatchScope& operator=(const PatchScope&) = delete;

  const std::vector<std::string>& names() const { return names_; }
  // Runs the graph rewrites of this scope's patches on a loaded module (before its first run).
  // Patches marked training_only are skipped unless `training`; `compiled_side` selects the
  // compiled_only patches (true) or the others (false). Returns sites rewritten.
  int rewrite(torch::jit::Module& module, bool training, bool compiled_side = false) const;

 private:
  std::vector<std::string> names_;
  PatchRegistry& registry_;
};

// The built-in table, for `zoobench patches`.
const std::vector<Patch>& list_patches();
// Names of the built-in patches active now, for result rows (`patches` column).
std::vector<std::string> active_patch_names();

}  // namespace zoobench::patches
