// Dropout whose mask costs one bit per element instead of one byte (the Ascend backend's
// second fix): operators zoobench::dropout_packed / zoobench::dropout_packed_backward with CPU
// and CUDA kernels and autograd, and a TorchScript rewrite of aten::dropout to them.
//
// Mask format: uint8 tensor of ceil(numel / 8) bytes; element i of x in *logical row-major
// order* (whatever x's strides) is bit (i % 8) of byte i / 8, least significant bit first;
// 1 = kept; the unused high bits of the last byte are 0. y = x * keep / (1 - p) (p = 1 gives
// zeros). With train=false the op is the identity (y is a copy of x) and the mask is empty
// (0 bytes); the backward treats an empty mask as the identity. Random bits come from the
// default generator of x's device, so manual_seed makes them reproducible.
#pragma once

#include <ATen/ATen.h>

#include <tuple>

#include "zoobench/patches/registry.h"
#include "zoobench/util/compat.h"

namespace zoobench::patches {

inline constexpr const char* kDropoutPackedSchema =
    "zoobench::dropout_packed(Tensor x, float p, bool train) -> (Tensor y, Tensor mask_bits)";
inline constexpr const char* kDropoutPackedBackwardSchema =
    "zoobench::dropout_packed_backward(Tensor grad, Tensor mask_bits, float p) -> Tensor";
// Feature dropout (aten::feature_dropout, nn.Dropout2d/3d): whole channels are kept or zeroed.
// x is [N, C, ...] (at least 2 dimensions); the mask holds one bit per (n, c), N * C bits in
// row-major order, drawn as dropout_packed draws them for N * C elements. Composed of
// dropout_packed (so CPU, CUDA and autograd come with it): y = x * keep[n, c] / (1 - p).
inline constexpr const char* kFeatureDropoutPackedSchema =
    "zoobench::feature_dropout_packed(Tensor x, float p, bool train) -> (Tensor y, Tensor "
    "mask_bits)";

// Declares both operators with CPU, CUDA (in CUDA builds) and Autograd kernels.
Registrations register_packed_dropout_ops();

// Calls through the dispatcher (autograd included); the packed_dropout patch must be active.
std::tuple<at::Tensor, at::Tensor> dropout_packed(const at::Tensor& x, double p, bool train);
at::Tensor dropout_packed_backward(const at::Tensor& grad, const at::Tensor& mask_bits, double p);
std::tuple<at::Tensor, at::Tensor> feature_dropout_packed(const at::Tensor& x, double p,
                                                          bool train);

// The mask as a bool tensor of `sizes` (for references and diagnostics).
at::Tensor unpack_dropout_mask(const at::Tensor& mask_bits, at::IntArrayRef sizes);

// Replaces every aten::dropout(input, p, train) in the module's methods by output 0 of
// zoobench::dropout_packed(input, p, train), and every aten::feature_dropout by output 0 of
// zoobench::feature_dropout_packed. Each method graph of the module is inlined first (and its
// constant conditions folded, as the graph executor would do), so dropout inside submodules
// and functional calls is found; the count is the number of sites in the inlined graphs. The
// in-place forms (aten::dropout_, aten::feature_dropout_) and the alpha variants are left
// alone and logged. Call before the module first runs; the
// packed_dropout patch must be active while the module lives.
int rewrite_dropout_to_packed(torch::jit::Module& module);

namespace dropout_kernels {
std::tuple<at::Tensor, at::Tensor> forward_cpu(const at::Tensor& x, double p, bool train);
at::Tensor backward_cpu(const at::Tensor& grad, const at::Tensor& mask_bits, double p);
#if ZOOBENCH_WITH_CUDA
std::tuple<at::Tensor, at::Tensor> forward_cuda(const at::Tensor& x, double p, bool train);
at::Tensor backward_cuda(const at::Tensor& grad, const at::Tensor& mask_bits, double p);
#endif
// Shared argument checks and the helpers both devices use.
void check_probability(double p);
void check_mask(const at::Tensor& grad, const at::Tensor& mask_bits);
int64_t mask_bytes(int64_t numel);
// The forward's buffers, before a kernel fills them: x made contiguous, y (like it) and the
// mask's bytes. In eval mode (train = false) the forward is complete: y is a copy of x and the
// mask is empty; `filled` says so, as it does for an empty x.
struct ForwardBuffers {
  at::Tensor x, y, mask;
  bool filled = false;
};
ForwardBuffers forward_buffers(const at::Tensor& x, bool train);
// P(keep) = keep_threshold / 2^32 for a uniform 32-bit draw r kept when r < keep_threshold.
uint64_t keep_threshold(double p);
// 1 / (1 - p), or 0 for p = 1 (everything dropped).
double keep_scale(double p);
}  // namespace dropout_kernels

}  // namespace zoobench::patches
