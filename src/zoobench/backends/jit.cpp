// `jit`: TorchScript's optimizing executor. Inference: freeze + optimize_for_inference
// (conv/bn folding, oneDNN layouts on CPU) then the profiling executor with fusion; training:
// the profiling executor with the NNC fuser and autodiff graphs. The profiling runs happen in
// prepare() so they count as compile time, not as measured iterations. Each step is a named
// switch (switches()) that --disable-switches turns off, for `zoobench bisect`.
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "zoobench/backends/builtin_backends.h"
#include "zoobench/backends/capture_rewrites.h"
#include "zoobench/backends/cuda_graph_executable.h"
#include "zoobench/backends/torchscript_executable.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/zoo/model_files.h"
#include "zoobench/zoo/training_loss.h"

namespace zoobench {
namespace {

// Enough calls for the profiling executor to record shapes (getNumProfiledRuns) and then build
// and run its optimized plan once.
constexpr int kProfilingRuns = 3;

class JitBackend : public Backend {
 public:
  std::string name() const override { return "jit"; }
  std::optional<std::string> submodules_refusal() const override { return std::nullopt; }
  std::string description() const override {
    return "TorchScript optimizing executor: freeze + optimize_for_inference, NNC fusion, autodiff";
  }
  std::optional<std::string> unsupported_reason(const Manifest& manifest,
                                                const BackendRequest&) const override {
    return torchscript_unsupported_reason(manifest);
  }
  std::vector<OptimizationSwitch> switches() const override {
    std::vector<OptimizationSwitch> switches = {
        {"freeze", "torch::jit::freeze: parameters and attributes become constants", "inference",
         ""},
        {"fold_frozen",
         "freezing's numerics-changing folds (conv-bn, conv-add/mul, linear-bn, concat of linears)",
         "inference", "freeze"},
        {"optimize_for_inference",
         "conv-add-relu fusion, oneDNN (MKLDNN) layouts on CPU, frozen linear transposes",
         "inference", "freeze"},
        {"executor",
         "the profiling graph executor's optimizations (specialization, fusion, autodiff graphs); "
         "off: op-by-op interpretation of the (frozen) graph",
         "all", ""},
        {"nnc_fuser",
         "the tensor-expression (NNC) fuser (on the CPU only where LibTorch was built with LLVM)",
         "all", "executor"},
        {"cudagraphs", "CUDA graph capture and replay (also --disable-cudagraphs)", "cuda", ""},
    };
    for (auto& s : capture_rewrite_switches()) switches.push_back(std::move(s));
    return switches;
  }

  std::unique_ptr<Executable> prepare(const Manifest& manifest, const BackendRequest& request,
                                      const std::vector<c10::IValue>& example_inputs) override {
    compat::enable_cpu_fusion(request.switch_on("nnc_fuser"));
    auto module = load_torchscript_for(manifest, request);
    if (request.after_load_compiled) request.after_load_compiled(module);
    if (request.mode == Mode::kInference && request.switch_on("freeze")) {
      module.eval();
      try {
        // Phases of their own: a model that hangs here (densenet121 on the H200) is then placed
        // by its timeout row, not only "during the jit run".
        {
          crash_report::PhaseScope phase("jit: freeze");
          module = torch::jit::freeze(module, c10::nullopt,
                                      /*optimize_numerics=*/request.switch_on("fold_frozen"));
        }
        // A frozen module has no `training` attribute, so this does not freeze it again.
        if (request.switch_on("optimize_for_inference")) {
          crash_report::PhaseScope phase("jit: optimize_for_inference");
          module = torch::jit::optimize_for_inference(module);
        }
      } catch (const std::exception& e) {
        // Some scripted models (control flow over attributes) cannot be frozen; the executor
        // still optimizes them, so run unfrozen rather than not at all.
        log::warn("{}: freeze/optimize_for_inference failed, running unfrozen: {}", manifest.name,
                  first_line(e.what()));
      }
    }
    rewrite_for_capture(module, request, manifest.name);
    const bool optimize = request.switch_on("executor");
    auto executable = std::make_unique<TorchScriptExecutable>(std::move(module), manifest, request,
                                                              optimize);
    profile(*executable, manifest, request, example_inputs, optimize);
    BackendRequest capture = request;
    capture.cudagraphs = request.cudagraphs && request.switch_on("cudagraphs");
    return wrap_in_cuda_graph_if_requested(std::move(executable), capture, example_inputs);
  }

 private:
  static void profile(TorchScriptExecutable& executable, const Manifest& manifest,
                      const BackendRequest& request, const std::vector<c10::IValue>& inputs,
                      bool optimize) {
    crash_report::PhaseScope phase("jit: profiling runs (the executor specializes and fuses)");
    if (request.mode == Mode::kInference) {
      for (int i = 0; i < kProfilingRuns; ++i) executable.run(clone_inputs(inputs));
      return;
    }
    // Training: forward + backward only, and the buffers (batch-norm statistics) restored,
    // so the profiling runs leave the model exactly as loaded.
    std::vector<std::pair<at::Tensor, at::Tensor>> saved;
    for (const auto& buffer : executable.module().buffers()) saved.emplace_back(buffer, buffer.clone());
    torch::jit::GraphOptimizerEnabledGuard executor_mode(optimize);
    for (int i = 0; i < kProfilingRuns; ++i) {
      auto outputs = executable.module().forward(clone_inputs(inputs));
      auto loss = training_loss(outputs, manifest.loss, manifest.loss_scale);
      loss.backward();
    }
    for (at::Tensor p : executable.module().parameters()) {
      if (p.grad().defined()) p.mutable_grad().zero_();
    }
    c10::NoGradGuard no_grad;
    for (auto& [buffer, copy] : saved) buffer.copy_(copy);
  }
};

}  // namespace

std::unique_ptr<Backend> make_jit_backend() { return std::make_unique<JitBackend>(); }

}  // namespace zoobench
