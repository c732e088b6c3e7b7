// Inductor's optimization switches: one table of torch._inductor.config keys with their off
// values (checked against PyTorch 2.11's config, the GPU machine's, on 2026-12-01), and the
// merge of the disabled ones into torch.compile's options.
//
// A switch is a step of Inductor that is on in the backend's mode and that one config key turns
// off by itself. Left out: keys that are off by default (freezing, aggressive_fusion,
// coordinate_descent_tuning outside the max-autotune modes: turning them "off" changes
// nothing; a user who turns them on with --compile-options can leave them out instead), and
// debugging aids that are no optimization (size_asserts, fallback_random).
#include "zoobench/backends/inductor_switches.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace zoobench {
namespace {

// The modes in which a switch's step is on.
enum class Modes {
  kEvery,        // every mode, torch.compile's default included
  kMaxAutotune,  // max-autotune, max-autotune-no-cudagraphs (max_autotune and its tuning)
  kCudaGraphs,   // upstream's inductor (no mode), reduce-overhead, max-autotune (triton.cudagraphs)
};

struct InductorSwitch {
  std::string name;        // the switch, as --disable-switches takes it
  std::string config_key;  // torch._inductor.config, as torch.compile's options name it
  nlohmann::json off;      // the key's value that turns the step off
  Modes modes;
  std::string applies;  // OptimizationSwitch::applies
  std::string requires_switch;
  std::string description;  // what the step does when on
};

const std::vector<InductorSwitch>& inductor_switches() {
  static const std::vector<InductorSwitch> kSwitches = {
      {"pattern_matcher", "pattern_matcher", false, Modes::kEvery, "all", "",
       "the pattern-replacement passes on the joint and post-grad graphs (mm+bias to addmm, "
       "attention to SDPA, fused quantization and norm patterns)"},
      {"joint_graph_constant_folding", "joint_graph_constant_folding", false, Modes::kEvery, "all",
       "", "constant folding of the joint (forward+backward) graph"},
      {"constant_and_index_propagation", "constant_and_index_propagation", false, Modes::kEvery,
       "all", "", "propagation of constants and index expressions through the lowered loops"},
      {"layout_optimization", "layout_optimization", false, Modes::kEvery, "all", "",
       "channels-last layouts for graphs with convolutions (kept at the outputs)"},
      {"fusion", "max_fusion_size", 1, Modes::kEvery, "all", "",
       "the scheduler's fusion of kernels (pointwise, reductions, templates' epilogues) into "
       "one; off: each buffer its own kernel (ops the lowering inlines stay inlined)"},
      {"loop_ordering_after_fusion", "loop_ordering_after_fusion", false, Modes::kEvery, "all", "",
       "reordering a fused kernel's loops to fit its accesses"},
      {"split_reductions", "split_reductions", false, Modes::kEvery, "all", "",
       "splitting a large reduction into two kernels (sums in another order)"},
      {"inplace_buffers", "inplace_buffers", false, Modes::kEvery, "all", "",
       "kernels writing their output into an input buffer they consume"},
      {"allow_buffer_reuse", "allow_buffer_reuse", false, Modes::kEvery, "all", "",
       "reusing a dead buffer for another intermediate"},
      {"cpp_vectorization", "cpp.simdlen", 1, Modes::kEvery, "cpu", "",
       "SIMD code in the CPU kernels; off: scalar loops"},
      {"shape_padding", "shape_padding", false, Modes::kEvery, "cuda", "",
       "padding matmul operands to Tensor Core multiples"},
      {"comprehensive_padding", "comprehensive_padding", false, Modes::kEvery, "cuda", "",
       "padding the strides of intermediate buffers for aligned access"},
      {"triton.persistent_reductions", "triton.persistent_reductions", false, Modes::kEvery, "cuda",
       "", "persistent reduction kernels (a whole row in one block) for small reductions"},
      {"max_autotune", "max_autotune", false, Modes::kMaxAutotune, "all", "",
       "benchmarking generated templates (Triton matmul/conv, CPU GEMM) against ATen's kernels"},
      {"epilogue_fusion", "epilogue_fusion", false, Modes::kMaxAutotune, "all", "max_autotune",
       "fusing pointwise epilogues into the autotuned templates"},
      {"coordinate_descent_tuning", "coordinate_descent_tuning", false, Modes::kMaxAutotune, "cuda",
       "", "coordinate-descent tuning of each kernel's block sizes"},
      {"triton.cudagraphs", "triton.cudagraphs", false, Modes::kCudaGraphs, "cuda", "",
       "CUDA graph trees around the compiled graphs (the row's cudagraphs column)"},
  };
  return kSwitches;
}

bool on_in_mode(Modes modes, const std::string& mode) {
  switch (modes) {
    case Modes::kEvery:
      return true;
    case Modes::kMaxAutotune:
      return mode == "max-autotune" || mode == "max-autotune-no-cudagraphs";
    case Modes::kCudaGraphs:
      return mode.empty() || mode == "reduce-overhead" || mode == "max-autotune";
  }
  return false;
}

// `spec`'s switches, in the table's order.
std::vector<const InductorSwitch*> switches_of(const TorchCompileSpec& spec) {
  std::vector<const InductorSwitch*> out;
  if (spec.dynamo_backend != "inductor") return out;
  for (const auto& s : inductor_switches()) {
    if (on_in_mode(s.modes, spec.mode)) out.push_back(&s);
  }
  return out;
}

}  // namespace

std::vector<OptimizationSwitch> torch_compile_switches(const TorchCompileSpec& spec) {
  std::vector<OptimizationSwitch> out;
  for (const InductorSwitch* s : switches_of(spec)) {
    const std::string off = nlohmann::json{{s->config_key, s->off}}.dump();
    out.push_back(
        {s->name, s->description + " [off: " + off + "]", s->applies, s->requires_switch});
  }
  return out;
}

std::string torch_compile_options_json(const TorchCompileSpec& spec,
                                       const std::string& user_options_json,
                                       const std::vector<std::string>& disabled_switches) {
  nlohmann::json options = user_options_json.empty() ? nlohmann::json::object()
                                                     : nlohmann::json::parse(user_options_json);
  for (const InductorSwitch* s : switches_of(spec)) {
    if (std::find(disabled_switches.begin(), disabled_switches.end(), s->name) !=
        disabled_switches.end())
      options[s->config_key] = s->off;
  }
  return options.empty() ? std::string() : options.dump();
}

std::optional<bool> torch_compile_cudagraphs(const TorchCompileSpec& spec, bool on_cuda,
                                             bool cudagraphs_allowed) {
  if (spec.dynamo_backend != "inductor" || !on_cuda) return std::nullopt;
  if (!cudagraphs_allowed) return false;
  if (spec.mode.empty()) return true;
  return std::nullopt;
}

std::string torch_compile_fixed_steps(const TorchCompileSpec& spec) {
  if (spec.dynamo_backend != "inductor") {
    return "dynamo's " + spec.dynamo_backend +
           " takes no torch.compile options, so none of its steps can be turned off here";
  }
  return "Inductor's other torch._inductor.config keys (freezing, aggressive_fusion, ...) are "
         "set with --compile-options '{\"KEY\": VALUE}' (with the default mode only); a "
         "disabled switch wins over --compile-options for its key";
}

}  // namespace zoobench
