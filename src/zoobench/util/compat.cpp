// Implementations behind compat.h: the only .cpp with version #ifs.
#include "zoobench/util/compat.h"

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/tensorexpr/codegen.h>

#if ZOOBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#endif

// Exported by libtorch in both versions; Debian's 1.13 headers leave out the header that
// declares it (torch/csrc/jit/codegen/fuser/interface.h).
namespace torch::jit {
TORCH_API void overrideCanFuseOnCPU(bool value);
}

namespace zoobench::compat {

AutocastGuard::AutocastGuard(c10::DeviceType device_type, c10::ScalarType dtype) : device_type_(device_type) {
#if ZOOBENCH_TORCH_AT_LEAST(2, 4)
  previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_dtype(device_type_, dtype);
  at::autocast::set_autocast_enabled(device_type_, true);
#else
  if (device_type_ == c10::DeviceType::CUDA) {
    previous_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(true);
  } else {
    previous_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(true);
  }
#endif
}

AutocastGuard::~AutocastGuard() {
#if ZOOBENCH_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
#else
  if (device_type_ == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(previous_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
  } else {
    at::autocast::set_cpu_enabled(previous_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
  }
#endif
  // Cached casts of weights must not outlive the region (as torch.autocast's __exit__ does).
  at::autocast::clear_cache();
}

bool nnc_can_compile_for_cpu() {
  // NNC insists on LLVM for CPU kernels (getTEMustUseLLVMOnCPU); builds without it (Debian's
  // 1.13) fail every fused graph with "LLVM Backend not found".
  try {
    torch::jit::tensorexpr::RegisterCodeGenList::GetInstance().FindStmtFactoryMethod("llvm_codegen");
    return true;
  } catch (...) {
    return false;
  }
}

bool enable_cpu_fusion(bool on) {
  const bool enable = on && nnc_can_compile_for_cpu();
  torch::jit::overrideCanFuseOnCPU(enable);
  // The tensor-expression fuser also serves CUDA graphs; only CPU fusion depends on LLVM.
  torch::jit::setTensorExprFuserEnabled(on);
  return enable;
}

#if ZOOBENCH_WITH_CUDA
namespace {
c10::DeviceIndex resolve(c10::DeviceIndex device) { return device < 0 ? c10::cuda::current_device() : device; }
}  // namespace
#endif

int64_t cuda_allocated_bytes(c10::DeviceIndex device) {
#if ZOOBENCH_WITH_CUDA
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(resolve(device));
  return stats.allocated_bytes[0].current;
#else
  (void)device;
  return 0;
#endif
}

int64_t cuda_peak_allocated_bytes(c10::DeviceIndex device) {
#if ZOOBENCH_WITH_CUDA
  device = resolve(device);
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  // Index 0 is StatType::AGGREGATE in every version (the enum moved namespaces in 2.5).
  return stats.allocated_bytes[0].peak;
#else
  (void)device;
  return 0;
#endif
}

void cuda_reset_peak_stats(c10::DeviceIndex device) {
#if ZOOBENCH_WITH_CUDA
  c10::cuda::CUDACachingAllocator::resetPeakStats(resolve(device));
#else
  (void)device;
#endif
}

void cuda_synchronize(c10::DeviceIndex device) {
#if ZOOBENCH_WITH_CUDA
  c10::cuda::device_synchronize();
  (void)device;
#else
  (void)device;
#endif
}

void cuda_release_cached_memory() {
#if ZOOBENCH_WITH_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

void set_current_device(const c10::Device& device) {
#if ZOOBENCH_WITH_CUDA
  if (device.is_cuda() && device.has_index()) c10::cuda::set_device(device.index());
#else
  (void)device;
#endif
}

int cuda_device_count() {
#if ZOOBENCH_WITH_CUDA
  return static_cast<int>(c10::cuda::device_count());
#else
  return 0;
#endif
}

int64_t cuda_total_memory_bytes(int device) {
#if ZOOBENCH_WITH_CUDA
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) return 0;
  return static_cast<int64_t>(properties.totalGlobalMem);
#else
  (void)device;
  return 0;
#endif
}

}  // namespace zoobench::compat
