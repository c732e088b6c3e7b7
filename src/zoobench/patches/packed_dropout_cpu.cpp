// CPU kernels of zoobench::dropout_packed and its backward, and the helpers both devices use.
// Random bits: one 64-bit key drawn from the default CPU generator per call, expanded with a
// counter-based Philox stream per mask byte, so bytes are independent and can be filled in
// parallel while the result depends only on the generator's state.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/core/PhiloxRNGEngine.h>

#include <cmath>
#include <mutex>

#include "zoobench/patches/packed_dropout.h"

namespace zoobench::patches::dropout_kernels {

void check_probability(double p) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
}

int64_t mask_bytes(int64_t numel) { return (numel + 7) / 8; }

ForwardBuffers forward_buffers(const at::Tensor& x, bool train) {
  ForwardBuffers b;
  if (!train) {
    b.y = x.clone(at::MemoryFormat::Contiguous);
    b.mask = at::empty({0}, x.options().dtype(at::kByte));
    b.filled = true;
    return b;
  }
  b.x = x.contiguous();
  b.y = at::empty_like(b.x);
  b.mask = at::empty({mask_bytes(b.x.numel())}, x.options().dtype(at::kByte));
  b.filled = b.x.numel() == 0;
  return b;
}

uint64_t keep_threshold(double p) {
  return static_cast<uint64_t>(std::llround((1.0 - p) * 4294967296.0));
}

double keep_scale(double p) { return p < 1 ? 1.0 / (1.0 - p) : 0.0; }

void check_mask(const at::Tensor& grad, const at::Tensor& mask_bits) {
  TORCH_CHECK(mask_bits.scalar_type() == at::kByte,
              "dropout_packed_backward: mask_bits must be "
              "uint8, got ",
              mask_bits.scalar_type());
  TORCH_CHECK(mask_bits.device() == grad.device(), "dropout_packed_backward: mask_bits is on ",
              mask_bits.device(), " but grad is on ", grad.device());
  TORCH_CHECK(mask_bits.numel() == 0 || mask_bits.numel() == mask_bytes(grad.numel()),
              "dropout_packed_backward: mask_bits has ", mask_bits.numel(), " bytes but grad has ",
              grad.numel(), " elements (expected ", mask_bytes(grad.numel()),
              " bytes, or 0 for an eval-mode mask)");
}

std::tuple<at::Tensor, at::Tensor> forward_cpu(const at::Tensor& x, double p, bool train) {
  check_probability(p);
  TORCH_CHECK(x.device().is_cpu(), "dropout_packed (CPU kernel): x must be a CPU tensor");
  TORCH_CHECK(at::isFloatingType(x.scalar_type()), "dropout_packed: x must be floating point, got ",
              x.scalar_type());
  ForwardBuffers buffers = forward_buffers(x, train);
  if (buffers.filled) return {buffers.y, buffers.mask};
  const at::Tensor& xc = buffers.x;
  const int64_t numel = xc.numel();
  at::Tensor& y = buffers.y;
  at::Tensor& mask = buffers.mask;

  uint64_t key;
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    key = at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
  }
  const uint64_t threshold = keep_threshold(p);
  uint8_t* bits = mask.data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, x.scalar_type(), "zoobench_dropout_packed_cpu", [&] {
        using acc_t = at::opmath_type<scalar_t>;
        const acc_t scale = static_cast<acc_t>(keep_scale(p));
        const scalar_t* in = xc.data_ptr<scalar_t>();
        scalar_t* out = y.data_ptr<scalar_t>();
        at::parallel_for(0, mask_bytes(numel), 4096, [&](int64_t begin, int64_t end) {
          for (int64_t b = begin; b < end; ++b) {
            at::philox_engine engine(key, /*subsequence=*/static_cast<uint64_t>(b), /*offset=*/0);
            uint8_t byte = 0;
            const int64_t first = 8 * b;
            const int64_t count = std::min<int64_t>(8, numel - first);
            for (int64_t k = 0; k < 8; ++k) {
              // Always draw 8 numbers so a byte's bits do not depend on numel.
              const bool keep = static_cast<uint64_t>(engine()) < threshold;
              if (k >= count) continue;
              byte |= static_cast<uint8_t>(keep) << k;
              out[first + k] = static_cast<scalar_t>(static_cast<acc_t>(in[first + k]) *
                                                     (keep ? scale : acc_t(0)));
            }
            bits[b] = byte;
          }
        });
      });
  return {y, mask};
}

at::Tensor backward_cpu(const at::Tensor& grad, const at::Tensor& mask_bits, double p) {
  check_probability(p);
  check_mask(grad, mask_bits);
  TORCH_CHECK(grad.device().is_cpu(),
              "dropout_packed_backward (CPU kernel): grad must be a CPU "
              "tensor");
  // contiguous() walks grad in its logical order, whatever its strides (permuted, expanded,
  // as_strided views), which is the order the mask was packed in.
  const at::Tensor g = grad.contiguous();
  if (mask_bits.numel() == 0) return g.clone();
  at::Tensor out = at::empty_like(g);
  const int64_t numel = g.numel();
  if (numel == 0) return out;
  const at::Tensor mask = mask_bits.contiguous();
  const uint8_t* bits = mask.data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, g.scalar_type(), "zoobench_dropout_packed_backward_cpu", [&] {
        using acc_t = at::opmath_type<scalar_t>;
        const acc_t scale = static_cast<acc_t>(keep_scale(p));
        const scalar_t* in = g.data_ptr<scalar_t>();
        scalar_t* o = out.data_ptr<scalar_t>();
        at::parallel_for(0, numel, 32768, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const bool keep = (bits[i >> 3] >> (i & 7)) & 1;
            o[i] = static_cast<scalar_t>(static_cast<acc_t>(in[i]) * (keep ? scale : acc_t(0)));
          }
        });
      });
  return out;
}

}  // namespace zoobench::patches::dropout_kernels
