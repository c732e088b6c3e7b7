// The patch table, conflict checks and reference-counted activation of patches.
#include "zoobench/patches/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "zoobench/patches/fault_injection.h"
#include "zoobench/patches/packed_dropout.h"
#include "zoobench/patches/planted_faults.h"
#include "zoobench/patches/torchvision_ops.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"

namespace zoobench::patches {
namespace {

std::vector<OperatorOverride> for_keys(const std::vector<std::string>& ops,
                                       const std::vector<c10::DispatchKey>& keys) {
  std::vector<OperatorOverride> out;
  for (const auto& op : ops) {
    for (auto key : keys) out.push_back({op, key});
  }
  return out;
}

std::vector<c10::DispatchKey> kernel_keys() {
  std::vector<c10::DispatchKey> keys = {c10::DispatchKey::CPU};
  if (compat::kHasCuda) keys.push_back(c10::DispatchKey::CUDA);
  keys.push_back(c10::DispatchKey::Autograd);
  return keys;
}

std::vector<Patch> builtin_table() {
  std::vector<Patch> table;
  {
    Patch p;
    p.name = "torchvision_ops";
    p.description =
        "torchvision::nms and torchvision::roi_align (with its backward) for processes without "
        "torchvision's native library (vision_maskrcnn)";
    p.defines = {"torchvision::nms", "torchvision::roi_align", "torchvision::_roi_align_backward"};
    auto keys = kernel_keys();
    keys.pop_back();  // nms has no autograd kernel, as in torchvision
    p.overrides = for_keys({"torchvision::nms"}, keys);
    auto roi =
        for_keys({"torchvision::roi_align", "torchvision::_roi_align_backward"}, kernel_keys());
    p.overrides.insert(p.overrides.end(), roi.begin(), roi.end());
    auto autocast = for_keys({"torchvision::nms", "torchvision::roi_align"},
                             {c10::DispatchKey::AutocastCPU, c10::DispatchKey::AutocastCUDA});
    p.overrides.insert(p.overrides.end(), autocast.begin(), autocast.end());
    p.applies = "before load";
    p.apply = register_torchvision_ops;
    table.push_back(std::move(p));
  }
  {
    Patch p;
    p.name = "packed_dropout";
    p.description =
        "dropout with a 1-bit-per-element mask: rewrites aten::dropout and aten::feature_dropout "
        "in training graphs to zoobench::dropout_packed / feature_dropout_packed (numel/8 bytes "
        "saved for backward instead of numel)";
    p.defines = {"zoobench::dropout_packed", "zoobench::dropout_packed_backward",
                 "zoobench::feature_dropout_packed"};
    p.overrides =
        for_keys({"zoobench::dropout_packed", "zoobench::dropout_packed_backward"}, kernel_keys());
    auto composite = for_keys({"zoobench::feature_dropout_packed"},
                              {c10::DispatchKey::CompositeImplicitAutograd});
    p.overrides.insert(p.overrides.end(), composite.begin(), composite.end());
    p.rewrites = {"aten::dropout(input, p, train) -> zoobench::dropout_packed(input, p, train)[0]",
                  "aten::feature_dropout(input, p, train) -> "
                  "zoobench::feature_dropout_packed(input, p, train)[0]"};
    p.applies = "at load, training models";
    p.training_only = true;
    p.apply = register_packed_dropout_ops;
    p.rewrite = rewrite_dropout_to_packed;
    table.push_back(std::move(p));
  }
  table.push_back(fault_injection_patch());
  for (auto& p : planted_fault_patches()) table.push_back(std::move(p));
  return table;
}

}  // namespace

std::string describe_overrides(const Patch& patch) {
  std::vector<std::string> ops;
  std::map<std::string, std::vector<std::string>> keys;
  for (const auto& o : patch.overrides) {
    if (!keys.count(o.op)) ops.push_back(o.op);
    keys[o.op].push_back(c10::toString(o.key));
  }
  std::vector<std::string> parts;
  for (const auto& op : ops) parts.push_back(fmt::format("{}[{}]", op, fmt::join(keys[op], ",")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

PatchRegistry::PatchRegistry(std::vector<Patch> patches) : patches_(std::move(patches)) {
  for (std::size_t i = 0; i < patches_.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (patches_[i].name == patches_[j].name) {
        throw std::logic_error("patch '" + patches_[i].name + "' is declared twice");
      }
    }
  }
}

PatchRegistry::~PatchRegistry() {
  // Unregister in reverse order of application; a static registry may outlive Torch's own
  // statics at exit, so the builtin one is never destroyed (see builtin()).
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) active_.erase(*it);
}

PatchRegistry& PatchRegistry::builtin() {
  // Leaked on purpose: destroying torch::Library objects during static destruction would
  // touch the dispatcher after it may already be gone.
  static auto* registry = new PatchRegistry(builtin_table());
  return *registry;
}

const Patch* PatchRegistry::find(const std::string& name) const {
  for (const auto& p : patches_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> PatchRegistry::active() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return order_;
}

void PatchRegistry::check_conflicts(const Patch& patch) const {
  for (const auto& name : order_) {
    const Patch* other = find(name);
    for (const auto& mine : patch.overrides) {
      for (const auto& theirs : other->overrides) {
        if (mine.op == theirs.op && mine.key == theirs.key) {
          throw std::runtime_error(fmt::format(
              "patches '{}' and '{}' both override {} for dispatch key {}; apply only one of "
              "them to this model (suite yaml `zoobench: patches:`)",
              other->name, patch.name, mine.op, c10::toString(mine.key)));
        }
      }
    }
    for (const auto& op : patch.defines) {
      if (std::find(other->defines.begin(), other->defines.end(), op) != other->defines.end()) {
        throw std::runtime_error(
            fmt::format("patches '{}' and '{}' both define operator {}; apply only one of them",
                        other->name, patch.name, op));
      }
    }
  }
}

void PatchRegistry::acquire(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (find(name) == nullptr) {
      std::vector<std::string> known;
      for (const auto& p : patches_) known.push_back(p.name);
      throw UsageError(fmt::format("unknown patch '{}'; known patches: {} (see `zoobench patches`)",
                                   name, fmt::join(known, ", ")));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> done;  // what this call changed, to undo on error
  try {
    for (const auto& name : names) {
      auto it = active_.find(name);
      if (it != active_.end()) {
        ++it->second.uses;
        done.push_back(name);
        continue;
      }
      const Patch& patch = *find(name);
      check_conflicts(patch);
      Active entry;
      if (patch.apply) entry.registrations = patch.apply();
      entry.uses = 1;
      active_.emplace(name, std::move(entry));
      order_.push_back(name);
      done.push_back(name);
      log::debug("patch {} applied", name);
    }
  } catch (...) {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      auto entry = active_.find(*it);
      if (--entry->second.uses == 0) {
        active_.erase(entry);
        order_.erase(std::find(order_.begin(), order_.end(), *it));
      }
    }
    throw;
  }
}

void PatchRegistry::release(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto name = names.rbegin(); name != names.rend(); ++name) {
    auto it = active_.find(*name);
    if (it == active_.end()) continue;
    if (--it->second.uses > 0) continue;
    active_.erase(it);
    order_.erase(std::find(order_.begin(), order_.end(), *name));
    log::debug("patch {} removed", *name);
  }
}

PatchScope::PatchScope(std::vector<std::string> names, PatchRegistry& registry)
    : names_(std::move(names)), registry_(registry) {
  // Listing a patch twice in one scope is the same as listing it once.
  std::vector<std::string> unique;
  for (const auto& n : names_) {
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);
  }
  names_ = std::move(unique);
  registry_.acquire(names_);
}

PatchScope::~PatchScope() { registry_.release(names_); }

int PatchScope::rewrite(torch::jit::Module& module, bool training, bool compiled_side) const {
  int sites = 0;
  for (const auto& name : names_) {
    const Patch* patch = registry_.find(name);
    if (!patch->rewrite || (patch->training_only && !training)) continue;
    if (patch->compiled_only != compiled_side) continue;
    int n = patch->rewrite(module);
    log::info("patch {}: rewrote {} site(s)", name, n);
    sites += n;
  }
  return sites;
}

const std::vector<Patch>& list_patches() { return PatchRegistry::builtin().patches(); }

std::vector<std::string> active_patch_names() { return PatchRegistry::builtin().active(); }

}  // namespace zoobench::patches
