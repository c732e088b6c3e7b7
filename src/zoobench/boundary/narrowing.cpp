// The layout-preserving cast, outputs allocated with the original strides, and write-back of
// mutated narrowed copies.
#include <ATen/MemoryOverlap.h>
#include <fmt/ranges.h>

#include <sstream>
#include <stdexcept>

#include "zoobench/boundary/boundary.h"
#include "zoobench/util/log.h"

namespace zoobench::boundary {

at::Tensor to_dtype_preserving_layout(const at::Tensor& src, at::ScalarType dtype) {
  if (src.scalar_type() == dtype) return src;
  if (src.layout() != at::kStrided) return src.to(dtype);
  if (src.numel() == 0) {
    return at::empty_strided(src.sizes(), src.strides(), src.options().dtype(dtype));
  }
  // `.to()` keeps the strides of dense tensors (permuted ones included): use it as is.
  if (is_non_overlapping_and_dense(src)) return src.to(dtype);

  const int64_t span = reachable_span(src);
  if (span > 4 * src.numel()) {
    log::debug(
        "boundary: casting {} storage elements for a {}-element tensor (sizes {}, strides {}): "
        "{:.1f}x the memory of a dense copy",
        span, src.numel(), fmt::join(src.sizes(), "x"), fmt::join(src.strides(), ","),
        static_cast<double>(span) / static_cast<double>(src.numel()));
  }
  // Every cell src can reach, from its data pointer on, as one dense run (storage offset kept).
  const at::Tensor cells = src.as_strided({span}, {1});
  return cells.to(dtype).as_strided(src.sizes(), src.strides(), 0);
}

at::Tensor allocate_output_like(const at::Tensor& reference, at::ScalarType dtype) {
  if (reference.layout() != at::kStrided) {
    std::ostringstream message;
    message << "allocate_output_like: a " << reference.layout()
            << " reference has no strides to allocate with";
    throw std::invalid_argument(message.str());
  }
  // empty_strided sizes its storage to the reachable span, overlapping strides included.
  return at::empty_strided(reference.sizes(), reference.strides(),
                           reference.options().dtype(dtype));
}

void write_back(const at::Tensor& original, const at::Tensor& narrowed) {
  if (original.is_same(narrowed)) return;
  if (original.sizes() != narrowed.sizes()) {
    throw std::invalid_argument(fmt::format("write_back: sizes differ (original {}, narrowed {})",
                                            fmt::join(original.sizes(), "x"),
                                            fmt::join(narrowed.sizes(), "x")));
  }
  if (original.layout() != at::kStrided ||
      at::has_internal_overlap(original) != at::MemOverlap::Yes) {
    original.copy_(narrowed);
    return;
  }
  // copy_ refuses destinations where a stride-0 dimension makes several elements one cell.
  // Cutting those dimensions to length 1 leaves a view that reaches the same cells, each through
  // fewer elements; the narrowed copy has the same aliasing, so its slice 0 holds the value.
  at::Tensor destination = original;
  at::Tensor source = narrowed;
  for (int64_t d = 0; d < original.dim(); ++d) {
    if (original.stride(d) == 0 && original.size(d) > 1) {
      destination = destination.narrow(d, 0, 1);
      source = source.narrow(d, 0, 1);
    }
  }
  destination.copy_(source);
}

}  // namespace zoobench::boundary
