// Every difference between the LibTorch versions zoobench builds against lives here:
// Debian's LibTorch 1.13 (CPU) and PyTorch 2.11 + CUDA 13 on the GPU machine.
// ZOOBENCH_WITH_CUDA / ZOOBENCH_WITH_AOTI come from cmake/ZoobenchDependencies.cmake.
// One difference is in the binaries, not the headers: PyTorch's pip wheels export statically
// linked copies of libstdc++'s std::filesystem directory iterators (pytorch/pytorch#133437)
// that break std::filesystem::remove_all; zoobench uses remove_tree (util/files.h) instead.
#pragma once

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <c10/core/Device.h>
#include <torch/version.h>

#include <cstdlib>
#include <optional>
#include <string>

#ifndef ZOOBENCH_WITH_CUDA
#define ZOOBENCH_WITH_CUDA 0
#endif
#ifndef ZOOBENCH_WITH_AOTI
#define ZOOBENCH_WITH_AOTI 0
#endif

#define ZOOBENCH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||           \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// How operator schemas spell a size argument that may be symbolic: torchvision declares
// roi_align's sizes `SymInt` since Torch 2.0 and `int` with Torch 1.13 (torchvision 0.14).
// A string literal, so schemas can be assembled at compile time.
#if ZOOBENCH_TORCH_AT_LEAST(2, 0)
#define ZOOBENCH_SCHEMA_SYMINT "SymInt"
#else
#define ZOOBENCH_SCHEMA_SYMINT "int"
#endif

namespace zoobench::compat {

inline std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

constexpr bool kHasCuda = ZOOBENCH_WITH_CUDA;
constexpr bool kHasAotInductor = ZOOBENCH_WITH_AOTI;

// Accuracy (on): upstream's setup_determinism (benchmarks/dynamo/common.py): torch's
// deterministic algorithms enforced (use_deterministic_algorithms(True): an op that has no
// deterministic kernel raises, and ops with both take the deterministic one, e.g. memory-efficient
// attention's backward, which only warns under warn_only and whose two eager runs then differ),
// except for the models of upstream's exception list (`deterministic_algorithms` false: not
// asked at all, as upstream), deterministic cuDNN, and TF32 off, so fp32 results are
// comparable. Off: upstream's performance settings, TF32 allowed and cuDNN's benchmark mode off
// (PyTorch's default, which upstream's harness keeps: with it on, the depthwise-convolution timm
// models' compiled sides timed up to 13% away from upstream's while their eager sides agreed).
// cuBLAS is deterministic only with a fixed workspace (CUBLAS_WORKSPACE_CONFIG, as upstream's
// setup_determinism sets it); cuBLAS reads it when the process makes its first handle, so it
// holds where the accuracy check is the model process's first GPU work (a user's value wins).
// Off takes away the value zoobench set: PyTorch 2.11 parses the variable with std::regex on
// every cuBLAS call while it is set (CublasHandlePool.cpp; bench/cublas_workspace_env.py), which
// made the eager side of matmul-heavy launch-bound models 2-4x slower when they were timed in the
// process that had just checked them (hf_Bert 14.2 ms against 5.0 ms on one H100). Upstream
// times in processes that never set it.
inline bool& cublas_workspace_set_here() {
  static bool set_here = false;
  return set_here;
}

// The CUBLAS_WORKSPACE_CONFIG in effect where a timing runs on a CUDA device: set there (by the
// user: zoobench takes its own away), it makes every cuBLAS call cost the host more.
inline std::optional<std::string> cublas_workspace_config_for_timing(const c10::Device& device) {
  const char* value = std::getenv("CUBLAS_WORKSPACE_CONFIG");
  if (!device.is_cuda() || value == nullptr) return std::nullopt;
  return std::string(value);
}

inline void set_deterministic_numerics(bool on, bool deterministic_algorithms = true) {
  if (on && std::getenv("CUBLAS_WORKSPACE_CONFIG") == nullptr) {
    ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
    cublas_workspace_set_here() = true;
  } else if (!on && cublas_workspace_set_here()) {
    ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
    cublas_workspace_set_here() = false;
  }
  at::globalContext().setDeterministicAlgorithms(on && deterministic_algorithms,
                                                 /*warn_only=*/false);
  at::globalContext().setDeterministicCuDNN(on);
  at::globalContext().setBenchmarkCuDNN(false);
  // The TF32 switches are deprecated in favour of setFloat32Precision in 2.9+, but both
  // versions still honour them and they say exactly what we mean.
  at::globalContext().setAllowTF32CuBLAS(!on);
  at::globalContext().setAllowTF32CuDNN(!on);
}

// cuDNN's switches a model's own code set where upstream's harness loads it, applied after the
// settings above as they come after upstream's (set_deterministic_numerics first); an unset
// switch keeps what those set.
inline void set_cudnn_switches(std::optional<bool> deterministic, std::optional<bool> benchmark) {
  if (deterministic) at::globalContext().setDeterministicCuDNN(*deterministic);
  if (benchmark) at::globalContext().setBenchmarkCuDNN(*benchmark);
}

// Autocast (--amp) for one device type, restored on destruction. The C++ switches were
// per-device functions in 1.13 (set_enabled / set_cpu_enabled) and take a device type in 2.x.
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device_type, c10::ScalarType dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_type_;
  bool previous_enabled_;
  c10::ScalarType previous_dtype_;
};

// TorchScript's fusion through NNC (torch._C._jit_override_can_fuse_on_cpu(True) and
// torch._C._jit_set_texpr_fuser_enabled(True) in Python). CPU fusion needs a LibTorch built
// with LLVM; returns whether CPU fusion is on.
bool enable_cpu_fusion(bool on);
bool nnc_can_compile_for_cpu();

// CUDA caching-allocator statistics (zero on CPU builds).
// A negative device index means the current device.
int64_t cuda_peak_allocated_bytes(c10::DeviceIndex device);
int64_t cuda_allocated_bytes(c10::DeviceIndex device);
void cuda_reset_peak_stats(c10::DeviceIndex device);
void cuda_synchronize(c10::DeviceIndex device);
// Returns the caching allocator's unused blocks to the device (torch.cuda.empty_cache()).
void cuda_release_cached_memory();
int cuda_device_count();
// The GPU's memory in bytes (0 on CPU builds), read without creating a context on it.
int64_t cuda_total_memory_bytes(int device);
// Makes `device` the current CUDA device of this thread (no-op for CPU devices).
void set_current_device(const c10::Device& device);

// The type of the running totals c10's allocators report to a c10::MemoryReportingInfoBase
// (int64_t in 1.13, size_t in 2.x): what an override of reportMemoryUsage must declare.
// Deduced from c10::reportMemoryUsageToProfiler, so no version number is guessed.
namespace detail {
template <typename>
struct ThirdParameter;
template <typename R, typename A, typename B, typename C, typename... Rest>
struct ThirdParameter<R (*)(A, B, C, Rest...)> {
  using type = C;
};
}  // namespace detail
using AllocatorReportTotal =
    detail::ThirdParameter<decltype(&c10::reportMemoryUsageToProfiler)>::type;

}  // namespace zoobench::compat

#if ZOOBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>

#include <cstdint>
#include <type_traits>

namespace zoobench::compat {

// A CUDA generator's Philox seed and offset, for kernels that draw random numbers. Under CUDA
// graph capture they may only be known on the device: read *seed_ptr and
// *offset_ptr + offset_intragraph there when the pointers are set.
struct PhiloxInputs {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const int64_t* seed_ptr = nullptr;    // set only under capture, where the seed is on device
  const int64_t* offset_ptr = nullptr;  // set only under capture
  uint32_t offset_intragraph = 0;
};

// at::PhiloxCudaState::seed_ is a union {val, ptr} in some Torch releases (a device pointer
// under capture) and a plain value in others; the layout is detected, not the version guessed.
template <typename State>
PhiloxInputs philox_inputs(const State& state) {
  PhiloxInputs out;
  if constexpr (std::is_same_v<std::decay_t<decltype(state.seed_)>, uint64_t>) {
    out.seed = state.seed_;
  } else if (state.captured_) {
    out.seed_ptr = state.seed_.ptr;
  } else {
    out.seed = state.seed_.val;
  }
  if (state.captured_) {
    out.offset_ptr = state.offset_.ptr;
    out.offset_intragraph = state.offset_intragraph_;
  } else {
    out.offset = state.offset_.val;
  }
  return out;
}

}  // namespace zoobench::compat
#endif  // ZOOBENCH_WITH_CUDA
