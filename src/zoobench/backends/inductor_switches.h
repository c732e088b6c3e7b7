// The torch.compile family's optimization switches (internal to backends/): Inductor's steps
// that a run can turn off, each through one entry of torch.compile's `options` (a
// torch._inductor.config key and its off value), and the options a run hands torch.compile
// once the user's --compile-options and the disabled switches are merged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"
#include "zoobench/backends/torch_compile.h"

namespace zoobench {

// The switches of `spec`: for dynamo's "inductor", Inductor's steps that are on in its mode
// (max_autotune and the others that the max-autotune modes turn on, triton.cudagraphs for
// the modes that capture); none for any other dynamo backend (aot_eager, ...), which takes no
// options. Static: listing them needs no Python.
std::vector<OptimizationSwitch> torch_compile_switches(const TorchCompileSpec& spec);

// torch.compile's `options` for a run, as JSON object text ("" for none): `user_options_json`
// (--compile-options: a JSON object, or "") with each switch of `spec` named in
// `disabled_switches` set to its off value. A disabled switch wins over the user's value for
// the same key: `zoobench bisect` hands every step the same --compile-options, and a step whose
// switch the user's options kept on would pin the failure on the wrong step. Names that are no
// switch of `spec` (patch:<name>, another backend's) are ignored.
std::string torch_compile_options_json(const TorchCompileSpec& spec,
                                       const std::string& user_options_json,
                                       const std::vector<std::string>& disabled_switches);

// triton.cudagraphs for a run of `spec`, or nullopt to leave it to the mode. Upstream's
// --backend inductor runs inside CUDA graphs on CUDA (its harness sets
// inductor_config.triton.cudagraphs unless --disable-cudagraphs or the suite's
// disable_cudagraph), so zoobench's `inductor` (no mode) does too, while `inductor:default` is
// torch.compile's default mode, without them. `cudagraphs_allowed` false (--disable-cudagraphs,
// the suite's list) turns them off in every mode of inductor. A disabled switch or
// --compile-options naming the key wins over this (the caller sets it only where absent).
std::optional<bool> torch_compile_cudagraphs(const TorchCompileSpec& spec, bool on_cuda,
                                             bool cudagraphs_allowed);

// One line for `zoobench list --switches`: what no switch of `spec` turns off, and how to.
std::string torch_compile_fixed_steps(const TorchCompileSpec& spec);

}  // namespace zoobench
