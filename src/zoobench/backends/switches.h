// Optimization switches: the named steps a backend applies (Backend::switches()) plus the
// model's patches ("patch:<name>"), which a run can turn off (`zoobench run --disable-switches`)
// and `zoobench bisect` searches for the ones that break a model's accuracy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"

namespace zoobench {

// A patch as a switch: "patch:" + its name. Every backend has one per patch of the model.
inline constexpr const char* kPatchSwitchPrefix = "patch:";
std::string patch_switch(const std::string& patch);
// The patch a "patch:<name>" switch names, or nullopt for a backend's own switch.
std::optional<std::string> patch_of_switch(const std::string& name);

// `backend`'s switches that act in `mode` on `device_type` ("cpu", "cuda").
std::vector<OptimizationSwitch> applicable_switches(const Backend& backend, Mode mode,
                                                    const std::string& device_type);

// Why the first of `names` that is neither a switch of one of `backends` nor a known patch
// ("patch:<name>") is unknown, naming the known ones; nullopt when every name is known. The
// caller says where the names came from (--disable-switches, a suite's switches_off).
std::optional<std::string> unknown_switch_name(const std::vector<std::string>& names,
                                               const std::vector<std::string>& backends);

// Checks --disable-switches names: UsageError with unknown_switch_name's reason.
void check_switch_names(const std::vector<std::string>& names,
                        const std::vector<std::string>& backends);

// Splits "a,b" into names (trimmed, empty parts and repeats dropped).
std::vector<std::string> parse_switch_list(const std::string& list);

}  // namespace zoobench
