// The 64-bit boundary: narrowing tensors (int64 -> int32, float64 -> float32, ...) where they
// enter compiled code that was built for 32-bit inputs, WITHOUT changing their layout. Compiled
// code addresses memory with the strides it was compiled for; `Tensor::to()` silently returns a
// contiguous tensor for any non-dense layout (overlapping, gapped, expanded), so such code reads
// the wrong cells. This header owns the layout predicates, the layout-preserving cast, outputs and
// write-back with the original strides, a memo of narrowed copies, the call-boundary helper, and
// the input layouts zoobench feeds backends to find the same class of bug (--input-layouts).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zoobench::boundary {

// --- Layout predicates ------------------------------------------------------------------------

// True when t's elements occupy exactly numel() distinct cells, densely, in some dimension order:
// the same answer as c10's TensorImpl::is_non_overlapping_and_dense(), computed from sizes and
// strides (zero-element tensors are dense). Such tensors can be cast with a plain `.to()`.
bool is_non_overlapping_and_dense(const at::Tensor& t);

// Number of storage elements reachable from t's data pointer: 1 + sum((size_i - 1) * stride_i),
// 0 for zero-element tensors. The cast, the output allocation and the write-back all use it.
// Torch refuses negative strides (as_strided, set_), so none can reach here; a non-strided
// tensor (sparse, mkldnn) is an error.
int64_t reachable_span(const at::Tensor& t);

// --- Layout-preserving cast, outputs, write-back ----------------------------------------------

// `src` cast to `dtype` with src's sizes and strides:
//  - same dtype: src itself (as `.to()` does);
//  - dense: exactly `src.to(dtype)` (which keeps the strides of dense permuted tensors);
//  - zero elements: an empty tensor with src's sizes and strides;
//  - otherwise the reachable span is cast as one 1-D dense tensor and viewed back with src's
//    sizes and strides. Aliased cells are equal in the source, so a cell-wise cast is exact.
//    Memory is span (not numel) elements; a debug line is logged when span > 4 x numel.
// Device work only: no host synchronization, no value inspection. CPU and CUDA.
at::Tensor to_dtype_preserving_layout(const at::Tensor& src, at::ScalarType dtype);

// An uninitialized tensor of `dtype` on reference's device with reference's sizes and strides
// (storage of exactly reachable_span elements, offset 0). Never `empty_like`, which collapses
// non-dense layouts to contiguous.
at::Tensor allocate_output_like(const at::Tensor& reference, at::ScalarType dtype);

// After a callee mutated `narrowed` (a to_dtype_preserving_layout copy of `original`), brings
// the change back into `original`, casting on the way: `original.copy_(narrowed)`, no full-size
// intermediate. When `original` has stride-0 (expand) dimensions, which copy_ refuses to write,
// the write goes through the view of `original` with those dimensions cut to length 1: every
// reachable cell is written once, and cells in the gaps of the span (which may belong to other
// views, and might not survive a narrowing round trip) are never touched. Nothing to do when
// `narrowed` is `original` itself.
void write_back(const at::Tensor& original, const at::Tensor& narrowed);

// --- Memo of narrowed copies ------------------------------------------------------------------

// Reuses a narrowed copy while its source is alive and unmodified, so repeated timed iterations
// do not pay for the cast. Keyed by tensor identity (TensorImpl*) and target dtype; an entry is
// valid while a weak reference to the source still locks, the source's version counter and
// metadata (sizes, strides, offset, data pointer) are unchanged, and the narrowed copy itself
// was not modified. Values are never compared (that would launch device work). Entries whose
// source died are dropped on lookup and by a sweep on every insertion; the memo never keeps a
// source alive. Not memoized: same-dtype casts (the result is the source), sources that require
// grad (each call must build its own graph), and inference tensors (no version counter).
// Writes that bypass the version counter (through `.data`, from_blob aliases, raw pointers) are
// not seen.
//
// Thread-safe: one mutex guards the table; the cast on a miss runs outside it, so two threads
// missing on the same source may both cast (the later insertion wins). On CUDA a cached copy
// obeys ordinary stream semantics: it was produced on the stream current at the miss.
class NarrowingMemo {
 public:
  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;       // casts performed (every call while disabled)
    int64_t uncacheable = 0;  // sources the memo may not cache (see above), cast every time
    int64_t dropped = 0;      // entries removed because their source died or changed
  };

  explicit NarrowingMemo(bool enabled = true);
  ~NarrowingMemo();
  NarrowingMemo(const NarrowingMemo&) = delete;
  NarrowingMemo& operator=(const NarrowingMemo&) = delete;

  // to_dtype_preserving_layout(src, dtype), reusing an earlier result when valid.
  at::Tensor narrow(const at::Tensor& src, at::ScalarType dtype);

  // Disabling also clears the table.
  void set_enabled(bool enabled);
  bool enabled() const;
  void clear();
  // Drops entries whose source died; returns how many.
  int64_t sweep();
  int64_t size() const;
  Stats stats() const;
  void reset_stats();

 private:
  struct Table;
  std::unique_ptr<Table> table_;
};

// --- Call boundary ----------------------------------------------------------------------------

// What a compiled callee expects of one input.
struct InputContract {
  std::optional<at::ScalarType> dtype;  // nullopt: passed through as is
  bool mutated = false;                 // the callee writes into it (in/out argument)
  // The strides the callee was compiled for, where it does not read a tensor's own strides
  // (AOTInductor bakes them into its kernels and, by default, does not check them: a
  // transposed image would be read as the image transposed). An input laid out otherwise is
  // copied into this layout. nullopt: the callee reads each tensor's own strides, so they
  // are kept (the narrowing above never changes them).
  std::optional<std::vector<int64_t>> strides;
};

// Whether t addresses its elements as `strides` would: equal strides in every dimension of
// size > 1 (a dimension of size 1 is never stepped through); zero-element tensors always do.
bool has_layout(const at::Tensor& t, at::IntArrayRef strides);

// Stages `inputs` to `contracts` (one per input), runs `callee` on the staged tensors and writes
// mutated ones back into the originals. Narrowed inputs keep their layout and their contents
// (a cast, never a fresh tensor), so in/out arguments start from the caller's values; an input
// whose contract fixes its strides is then copied into them if it is laid out otherwise.
// Read-only inputs go through `memo` for the cast when one is given; mutated ones never do.
// Returns callee's result. An input that already matches its contract is passed through as the
// same tensor and mutated in place.
using NarrowedCallee = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;
std::vector<at::Tensor> call_with_narrowed_inputs(const std::vector<at::Tensor>& inputs,
                                                  const std::vector<InputContract>& contracts,
                                                  const NarrowedCallee& callee,
                                                  NarrowingMemo* memo = nullptr);

// --- Input layouts (zoobench run --input-layouts) ---------------------------------------------

// How a backend is fed an input, to check that it honours strides:
//  contiguous   the values, row-major;
//  transposed   the same values stored with the last two dimensions of size >= 2 swapped in
//               memory (dense, permuted);
//  gapped       the same values every other element of a buffer twice as long along the last
//               dimension of size >= 2; the gaps hold NaN / bitwise-not / logical-not of the
//               neighbouring value, so a backend that reads them goes visibly wrong;
//  overlapping  rows overlapping by half (row stride = row length / 2, as Longformer's chunking
//               does); the values change to what that view shows;
//  expanded     the first slice along the first dimension of size >= 2 broadcast along it
//               (stride 0); the values change accordingly.
// Overlapping and expanded tensors are for read-only inputs: in-place writes into them are
// refused (expanded) or depend on the order of the writes (overlapping).
enum class InputLayout { kContiguous, kTransposed, kGapped, kOverlapping, kExpanded };

std::string_view input_layout_name(InputLayout layout);
// Throws UsageError naming the valid layouts.
InputLayout parse_input_layout(std::string_view name);
// "contiguous,gapped" -> {kContiguous, kGapped}; empty items and unknown names are errors.
std::vector<InputLayout> parse_input_layouts(std::string_view comma_separated);
const std::vector<InputLayout>& all_input_layouts();

struct LayoutedInput {
  at::Tensor tensor;    // the values in the requested layout (fresh memory, never aliases values)
  at::Tensor dense;     // the same values as `tensor`, contiguous, for the eager reference
  bool applies = true;  // false: the layout means nothing for this shape (0-d, one element,
                        // too few dimensions of size >= 2); tensor is then contiguous
};

// Same dtype and device as `values`.
LayoutedInput make_input_layout(const at::Tensor& values, InputLayout layout);

}  // namespace zoobench::boundary
