// ATen glue of zoobench::dropout_packed's CUDA kernels (cuda_launchers.h): checks, allocation,
// stream, and the Philox seed/offset reserved from the device's default CUDA generator (graph
// capture safe: under capture the kernel reads the offset on the device).
#include "zoobench/patches/packed_dropout.h"

#if ZOOBENCH_WITH_CUDA

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAGuard.h>

#include <mutex>

#include "zoobench/patches/cuda_glue.h"
#include "zoobench/util/compat.h"

namespace zoobench::patches::dropout_kernels {

std::tuple<at::Tensor, at::Tensor> forward_cuda(const at::Tensor& x, double p, bool train) {
  check_probability(p);
  TORCH_CHECK(x.is_cuda(), "dropout_packed (CUDA kernel): x must be a CUDA tensor");
  const cuda::Dtype dtype = cuda::kernel_dtype(x, "dropout_packed", /*bfloat16_supported=*/true);
  c10::cuda::CUDAGuard guard(x.device());
  ForwardBuffers buffers = forward_buffers(x, train);
  if (buffers.filled) return {buffers.y, buffers.mask};
  const at::Tensor& xc = buffers.x;
  const int64_t numel = xc.numel();
  at::Tensor& y = buffers.y;
  at::Tensor& mask = buffers.mask;

  // The grid decides how many numbers each thread draws, so it is planned before the offset
  // is reserved (and the launch uses the same plan).
  cuda::DropoutForwardGrid grid;
  cuda::check_launch(cuda::plan_dropout_packed_forward(dtype, numel, &grid), "dropout_packed");
  at::PhiloxCudaState state;
  {
    auto gen = at::cuda::detail::getDefaultCUDAGenerator(x.device().index());
    std::lock_guard<std::mutex> lock(gen.mutex());
    state =
        at::check_generator<at::CUDAGeneratorImpl>(gen)->philox_cuda_state(grid.randoms_per_thread);
  }
  const compat::PhiloxInputs inputs = compat::philox_inputs(state);
  cuda::PhiloxArgs philox;
  philox.seed = inputs.seed;
  philox.offset = inputs.offset;
  philox.seed_ptr = inputs.seed_ptr;
  philox.offset_ptr = inputs.offset_ptr;
  philox.offset_intragraph = inputs.offset_intragraph;
  cuda::check_launch(
      cuda::launch_dropout_packed_forward(dtype, grid, xc.data_ptr(), y.data_ptr(),
                                          mask.data_ptr<uint8_t>(), numel, keep_threshold(p),
                                          keep_scale(p), philox, at::cuda::getCurrentCUDAStream()),
      "dropout_packed");
  return {y, mask};
}

at::Tensor backward_cuda(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  check_probability(p);
  check_mask(grad, mask_bits);
  TORCH_CHECK(grad.is_cuda(), "dropout_packed_backward (CUDA kernel): grad must be a CUDA tensor");
  const cuda::Dtype dtype =
      cuda::kernel_dtype(grad, "dropout_packed_backward", /*bfloat16_supported=*/true);
  c10::cuda::CUDAGuard guard(grad.device());
  if (mask_bits.numel() == 0) return grad.clone(at::MemoryFormat::Contiguous);
  // The kernel reads any layout through its strides (a contiguous one vectorised); only very
  // high-rank views are copied.
  const at::Tensor g = grad.dim() > cuda::kMaxDims ? grad.contiguous() : grad;
  at::Tensor out = at::empty(g.sizes(), g.options());
  const int64_t numel = g.numel();
  if (numel == 0) return out;
  cuda::StridedLayout layout;
  if (g.is_contiguous()) {
    layout.dims = 1;
    layout.sizes[0] = numel;
    layout.strides[0] = 1;
  } else {
    layout.dims = static_cast<int>(g.dim());
    for (int d = 0; d < layout.dims; ++d) {
      layout.sizes[d] = g.size(d);
      layout.strides[d] = g.stride(d);
    }
  }
  const at::Tensor mask = mask_bits.contiguous();
  cuda::check_launch(cuda::launch_dropout_packed_backward(
                         dtype, g.data_ptr(), layout, mask.data_ptr<uint8_t>(), numel,
                         keep_scale(p), out.data_ptr(), at::cuda::getCurrentCUDAStream()),
                     "dropout_packed_backward");
  return out;
}

}  // namespace zoobench::patches::dropout_kernels

#endif  // ZOOBENCH_WITH_CUDA
