// CUDA graph capture of an executable's inference call or whole training step.
#include "zoobench/backends/cuda_graph_executable.h"

#include <fmt/format.h>

#include <functional>
#include <optional>

#include "zoobench/backends/host_sync_ops.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/util/text.h"
#include "zoobench/zoo/model_files.h"

#if ZOOBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace zoobench {

#if ZOOBENCH_WITH_CUDA
namespace {

// Warm-up calls before capture: lazy initialisation (cuBLAS handles, workspaces, allocator
// blocks) must not happen during capture.
constexpr int kWarmupCalls = 3;

void copy_into(std::vector<c10::IValue>& statics, const std::vector<c10::IValue>& inputs) {
  for (std::size_t i = 0; i < statics.size() && i < inputs.size(); ++i) {
    if (statics[i].isTensor() && inputs[i].isTensor()) {
      at::Tensor target = statics[i].toTensor();
      const at::Tensor& source = inputs[i].toTensor();
      if (target.unsafeGetTensorImpl() != source.unsafeGetTensorImpl()) target.copy_(source, /*non_blocking=*/true);
    }
  }
}

// CUDA's sync-debug mode set to error for a scope: an operation that waits for the device
// (item(), a copy to the host, nonzero) raises instead, and TorchScript's traceback names it.
class SyncIsAnError {
 public:
  SyncIsAnError() : before_(c10::cuda::warning_state().get_sync_debug_mode()) {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SyncIsAnError() { c10::cuda::warning_state().set_sync_debug_mode(before_); }
  SyncIsAnError(const SyncIsAnError&) = delete;
  SyncIsAnError& operator=(const SyncIsAnError&) = delete;

 private:
  c10::cuda::SyncDebugMode before_;
};

bool is_sync_error(const std::string& message) {
  return message.find("called a synchronizing CUDA operation") != std::string::npos;
}

bool is_out_of_memory(const std::string& message) {
  return message.find("out of memory") != std::string::npos;
}

std::unique_ptr<at::cuda::CUDAGraph> capture_once(const std::function<void()>& record) {
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  graph->capture_begin();
  try {
    record();
  } catch (...) {
    try {
      graph->capture_end();
    } catch (...) {
      // The capture is already invalid; ending it only resets the stream's state.
    }
    throw;
  }
  graph->capture_end();
  return graph;
}

}  // namespace

std::unique_ptr<at::cuda::CUDAGraph> capture_graph(const std::function<void()>& record) {
  try {
    return capture_once(record);
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e.what())) throw;
  }
  // A capture allocates from the graph's private pool, which cannot reuse the blocks the
  // allocator caches for ordinary allocations, and the allocator frees no cached block while
  // a capture is underway. So an accuracy check whose float64 run left 107 GiB cached ran out
  // of memory capturing BlenderbotSmallForCausalLM at batch 256 (2026-12-03e) while its timed
  // run, with no float64 run before it, captured. The failed graph is gone by now (its pool
  // with it); release what is cached and capture once more.
  log::info(
      "CUDA graph capture ran out of memory: releasing the allocator's cached blocks and capturing "
      "again");
  c10::cuda::device_synchronize();
  compat::cuda_release_cached_memory();
  return capture_once(record);
}

namespace {

class CudaGraphExecutable : public Executable {
 public:
  CudaGraphExecutable(std::unique_ptr<Executable> inner, const BackendRequest& request)
      : inner_(std::move(inner)), request_(request) {}

  void capture(const std::vector<c10::IValue>& example_inputs) {
    if (request_.mode == Mode::kTraining && request_.optimizer.kind == "adam") {
      // Adam keeps its step count on the host: a replayed step would reuse the captured one.
      run_uncaptured("failed", "the " + request_.optimizer.kind + " optimizer's host-side step count cannot be captured");
      return;
    }
    if (std::string why = inner_->uncapturable_reason(); !why.empty()) {
      run_uncaptured("skipped", why);
      return;
    }
    c10::cuda::CUDAGuard device_guard(request_.device);
    static_inputs_ = clone_inputs(example_inputs);
    // A training warm-up changes weights and statistics: snapshot and restore them so the
    // captured executable starts from the loaded model like the eager reference does.
    std::vector<std::pair<at::Tensor, at::Tensor>> snapshot;
    if (request_.mode == Mode::kTraining) {
      auto state = inner_->training_state();
      for (auto& [name, t] : state.parameters) snapshot.emplace_back(t, t.detach().clone());
      for (auto& [name, t] : state.buffers) snapshot.emplace_back(t, t.detach().clone());
    }
    auto restore = [&] {
      c10::NoGradGuard no_grad;
      for (auto& [live, saved] : snapshot) live.copy_(saved);
      for (auto& [name, grad] : inner_->training_state().gradients) {
        if (grad.defined()) grad.zero_();
      }
    };
    const bool training = request_.mode == Mode::kTraining;
    try {
      auto side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, request_.device.index());
      c10::cuda::device_synchronize();
      {
        // Phases of their own, so that a hang or a crash here is placed by its row.
        crash_report::PhaseScope phase("cudagraphs: warm-up calls before capture");
        c10::cuda::CUDAStreamGuard on_side(side);
        for (int i = 0; i < kWarmupCalls; ++i) {
          // The first call with syncs as errors: a host read would fail the capture (or, as on
          // vision_maskrcnn, crash it), so it is found here and the model runs uncaptured.
          std::optional<SyncIsAnError> sync_check;
          if (i == 0) sync_check.emplace();
          try {
            if (training) inner_->step(static_inputs_);
            else inner_->run(static_inputs_);
          } catch (const std::exception& e) {
            if (!is_sync_error(e.what())) throw;
            sync_check.reset();
            c10::cuda::device_synchronize();
            log::warn("the model waits for the device, so no CUDA graph can hold it:\n{}", e.what());
            if (training) restore();
            run_uncaptured("skipped", "the model waits for the device (a host read) at " +
                                          torchscript_innermost_frame(e.what()));
            return;
          }
        }
      }
      c10::cuda::device_synchronize();
      {
        // Capture needs a non-default stream; nothing runs during capture, kernels are recorded.
        crash_report::PhaseScope phase("cudagraphs: capture");
        c10::cuda::CUDAStreamGuard on_side(side);
        graph_ = capture_graph([&] {
          if (training)
            static_step_ = inner_->step(static_inputs_);
          else
            static_outputs_ = inner_->run(static_inputs_);
        });
      }
      c10::cuda::device_synchronize();
      if (training) restore();
    } catch (...) {
      const std::string message = current_exception_message();
      // The row keeps one line; the log keeps the TorchScript traceback, which names the
      // operation that could not be captured.
      if (message.find('\n') != std::string::npos) {
        log::warn("CUDA graph capture failed in:\n{}", message);
      }
      std::string why = first_line(message);
      try {
        if (training) restore();
      } catch (...) {
        why += " (and restoring the weights after the warm-up failed: " +
               first_line(current_exception_message()) + ")";
      }
      run_uncaptured("failed", why);
    }
  }

  c10::IValue run(const std::vector<c10::IValue>& inputs) override {
    if (!graph_) return inner_->run(inputs);
    copy_into(static_inputs_, inputs);
    graph_->replay();
    return static_outputs_;
  }

  StepResult step(const std::vector<c10::IValue>& inputs) override {
    if (!graph_) return inner_->step(inputs);
    copy_into(static_inputs_, inputs);
    graph_->replay();
    return static_step_;
  }

  TrainingState training_state() const override { return inner_->training_state(); }

  ExecutionInfo info() const override { return info_; }

 private:
  // `how`: "failed" (capture was tried) or "skipped" (known beforehand not to work).
  void run_uncaptured(const char* how, const std::string& why) {
    graph_.reset();
    info_.cudagraphs = "fallback";
    info_.note = fmt::format("CUDA graph capture {}, ran uncaptured: {}", how, why);
    log::warn("{}", info_.note);
  }

  std::unique_ptr<Executable> inner_;
  BackendRequest request_;
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  std::vector<c10::IValue> static_inputs_;
  c10::IValue static_outputs_;
  StepResult static_step_;
  ExecutionInfo info_{"on", ""};
};

}  // namespace
#endif

std::unique_ptr<Executable> wrap_in_cuda_graph_if_requested(std::unique_ptr<Executable> inner,
                                                            const BackendRequest& request,
                                                            const std::vector<c10::IValue>& example_inputs) {
#if ZOOBENCH_WITH_CUDA
  if (request.device.is_cuda() && request.cudagraphs) {
    auto wrapped = std::make_unique<CudaGraphExecutable>(std::move(inner), request);
    wrapped->capture(example_inputs);
    return wrapped;
  }
#endif
  (void)request;
  (void)example_inputs;
  return inner;
}

}  // namespace zoobench
