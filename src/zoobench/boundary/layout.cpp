// The layout predicates: c10's non-overlapping-and-dense test and the reachable span, computed
// from sizes and strides only (no storage access, no device work).
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "zoobench/boundary/boundary.h"

namespace zoobench::boundary {
namespace {

void require_strided(const at::Tensor& t, const char* what) {
  if (!t.defined()) throw std::invalid_argument(std::string(what) + ": undefined tensor");
  if (t.layout() != at::kStrided) {
    std::ostringstream message;
    message << what << ": a " << t.layout()
            << " tensor has no strides; only strided tensors have a layout";
    throw std::invalid_argument(message.str());
  }
}

}  // namespace

bool is_non_overlapping_and_dense(const at::Tensor& t) {
  require_strided(t, "is_non_overlapping_and_dense");
  // c10 calls every zero-element tensor contiguous, whatever its strides.
  if (t.numel() == 0) return true;
  // c10's cached contiguity flag: a contiguous tensor is dense, and asking costs nothing.
  if (t.is_contiguous()) return true;
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  // Dimensions of size 1 address no second cell, so their strides do not matter.
  c10::SmallVector<int64_t, 8> dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (sizes[d] >= 2) dims.push_back(d);
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  // Dense without overlap exactly when, innermost first, each stride is the product of the
  // sizes inside it (a permutation of a contiguous layout).
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

int64_t reachable_span(const at::Tensor& t) {
  require_strided(t, "reachable_span");
  if (t.numel() == 0) return 0;
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t stride = t.stride(d);
    if (stride < 0) {
      // Torch refuses negative strides everywhere a tensor can be made; say so if one appears.
      throw std::invalid_argument("reachable_span: negative stride " + std::to_string(stride) +
                                  " in dimension " + std::to_string(d));
    }
    span += (t.size(d) - 1) * stride;
  }
  return span;
}

}  // namespace zoobench::boundary
