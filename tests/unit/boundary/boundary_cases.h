// The 64-bit boundary's test cases, written once and run on every device: the CPU suite
// (boundary_cpu_test.cpp) and the CUDA suite (tests/gpu/boundary) each include this file and
// instantiate BoundaryTest for their device. Include it from exactly one file per executable.
//
// Three sections:
//  1. references: element offsets and element values computed index by index from the raw
//     storage (independent of ATen's copy and indexing kernels), a catalogue of named layouts,
//     and StrideBakedKernel, a stand-in for compiled code;
//  2. library semantics: predicates, the cast, outputs, write-back, memo, call boundary, input
//     layouts;
//  3. the bug the boundary exists for: the stride-baked kernel is wrong through a naive `.to()`
//     and right through the boundary.
// To add a layout, append it to named_layouts(); every semantic test runs over the catalogue.
#pragma once

#include <ATen/MemoryOverlap.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/accumulate.h>
#include <c10/util/strides.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "zoobench/boundary/boundary.h"

namespace zoobench::boundary {
namespace {

// --- 1. References --------------------------------------------------------------------------

// Storage offsets (relative to the data pointer) of every element, in row-major index order.
std::vector<int64_t> element_offsets(at::IntArrayRef sizes, at::IntArrayRef strides) {
  int64_t numel = 1;
  for (int64_t size : sizes) numel *= size;
  std::vector<int64_t> offsets;
  if (numel == 0) return offsets;
  offsets.reserve(numel);
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t k = 0; k < numel; ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < sizes.size(); ++d) offset += index[d] * strides[d];
    offsets.push_back(offset);
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

std::vector<int64_t> element_offsets(const at::Tensor& t) {
  return element_offsets(t.sizes(), t.strides());
}

// A dense 1-D tensor's cells on the host, as doubles (exact for the values used here).
std::vector<double> host_values(const at::Tensor& dense_1d) {
  at::Tensor host = dense_1d.to(at::kCPU).to(at::kDouble).contiguous();
  return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
}

// The storage cells from t's data pointer on, enough to cover every element.
std::vector<double> cells_from_data_pointer(const at::Tensor& t) {
  const std::vector<int64_t> offsets = element_offsets(t);
  if (offsets.empty()) return {};
  const int64_t span = *std::max_element(offsets.begin(), offsets.end()) + 1;
  return host_values(t.as_strided({span}, {1}));
}

// t's elements in row-major index order, each read from the storage cell its strides address.
std::vector<double> values_by_index(const at::Tensor& t) {
  const std::vector<double> cells = cells_from_data_pointer(t);
  std::vector<double> values;
  for (int64_t offset : element_offsets(t)) values.push_back(cells[offset]);
  return values;
}

bool has_repeated_offsets(const at::Tensor& t) {
  std::vector<int64_t> offsets = element_offsets(t);
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end();
}

int64_t count_mismatches(const std::vector<double>& expected, const std::vector<double>& actual) {
  if (expected.size() != actual.size()) return static_cast<int64_t>(expected.size());
  int64_t wrong = 0;
  for (size_t i = 0; i < expected.size(); ++i) wrong += expected[i] != actual[i];
  return wrong;
}

double cast_value(double value, at::ScalarType dtype) {
  switch (dtype) {
    case at::kInt:
      return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(value)));
    case at::kFloat:
      return static_cast<double>(static_cast<float>(value));
    default:
      return value;
  }
}

// Row-major strides of `sizes`: what a callee compiled for contiguous inputs has baked in.
std::vector<int64_t> compiled_strides(at::IntArrayRef sizes) {
  const c10::DimVector strides = c10::contiguous_strides(sizes);
  return {strides.begin(), strides.end()};
}

struct NamedLayout {
  std::string name;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset;
  bool dense;
};

std::vector<NamedLayout> named_layouts() {
  return {
      {"contiguous", {3, 4}, {4, 1}, 0, true},
      {"contiguous_offset", {3, 4}, {4, 1}, 5, true},
      {"permuted", {3, 4}, {1, 3}, 0, true},
      {"permuted_3d", {2, 3, 4}, {1, 8, 2}, 2, true},
      {"size1_odd_strides", {1, 4, 1}, {100, 1, 7}, 0, true},
      {"scalar", {}, {}, 3, true},
      {"one_element", {1, 1}, {9, 5}, 1, true},
      {"expanded", {3, 4}, {0, 1}, 0, false},
      {"expanded_inner", {2, 3, 4}, {12, 4, 0}, 1, false},
      {"expanded_gapped", {4, 3, 5}, {0, 12, 2}, 1, false},
      {"gapped_columns", {3, 4}, {8, 2}, 3, false},
      {"padded_rows", {3, 4}, {6, 1}, 0, false},
      {"strided_1d", {5}, {3}, 2, false},
      {"permuted_gapped", {6, 10}, {1, 12}, 2, false},
      {"overlapping_rows", {4, 8}, {4, 1}, 0, false},
      {"overlapping_gapped", {3, 4}, {3, 2}, 1, false},
      {"longformer_chunks", {6, 1024}, {512, 1}, 0, false},
      {"amplified", {4, 4}, {100, 1}, 0, false},
      {"zero_rows", {0, 4}, {4, 1}, 0, true},
      {"zero_odd_strides", {3, 0}, {7, 1}, 2, true},
  };
}

// Cells the view does not reach hold values a 32-bit round trip would change, so a write-back
// that touches them shows.
double unreachable_cell_value(at::ScalarType dtype, int64_t cell) {
  return dtype == at::kDouble ? 1e30 / 3 : static_cast<double>((int64_t{1} << 40) + cell);
}

double reachable_cell_value(at::ScalarType dtype, int64_t cell) {
  return dtype == at::kDouble ? 1.0 / 3 + 0.37 * static_cast<double>(cell)
                              : static_cast<double>(1000 + 7 * cell);
}

// A view in a given layout over its own storage (kept in `storage` to inspect every cell).
struct LaidOut {
  at::Tensor storage;  // 1-D, dense
  at::Tensor view;
};

LaidOut lay_out(at::IntArrayRef sizes, at::IntArrayRef strides, int64_t offset,
                at::ScalarType dtype, at::Device device) {
  const std::vector<int64_t> offsets = element_offsets(sizes, strides);
  const int64_t span = offsets.empty() ? 0 : *std::max_element(offsets.begin(), offsets.end()) + 1;
  const int64_t cells = offset + span + 3;  // slack after the span, which must stay untouched
  std::vector<bool> reachable(cells, false);
  for (int64_t o : offsets) reachable[offset + o] = true;
  at::Tensor host = at::empty({cells}, at::TensorOptions().dtype(dtype));
  for (int64_t c = 0; c < cells; ++c) {
    const double value =
        reachable[c] ? reachable_cell_value(dtype, c) : unreachable_cell_value(dtype, c);
    if (dtype == at::kDouble) {
      host.data_ptr<double>()[c] = value;
    } else {
      host.data_ptr<int64_t>()[c] = static_cast<int64_t>(value);
    }
  }
  at::Tensor storage = host.to(device);
  return {storage, storage.as_strided(sizes, strides, offset)};
}

LaidOut lay_out(const NamedLayout& layout, at::ScalarType dtype, at::Device device) {
  return lay_out(layout.sizes, layout.strides, layout.offset, dtype, device);
}

// A stand-in for compiled code: built for int32 tensors of given sizes and strides, it captures
// the storage offsets those strides address, and from then on sees only data pointers (as an
// AOT-compiled kernel does). Its memory is what lies between the data pointer and the end of
// the allocation; a read past it yields kPoison and a write past it is dropped (real compiled
// code would read garbage or corrupt memory).
class StrideBakedKernel {
 public:
  static constexpr int32_t kPoison = std::numeric_limits<int32_t>::min();

  StrideBakedKernel(at::IntArrayRef sizes, at::IntArrayRef strides, at::Device device)
      : offsets_(at::tensor(element_offsets(sizes, strides), at::kLong).to(device)) {}
  explicit StrideBakedKernel(const at::Tensor& like)
      : StrideBakedKernel(like.sizes(), like.strides(), like.device()) {}

  // y = x * 2 + 1, y addressed with the same baked strides.
  void affine(const at::Tensor& x, const at::Tensor& y) const { write(y, read(x) * 2 + 1); }
  // The sum of x's elements (int64).
  int64_t sum(const at::Tensor& x) const { return read(x).to(at::kLong).sum().item<int64_t>(); }
  // x = x * 3 + offset % 7, in place: a read-modify-write, for layouts without aliasing.
  void scale_in_place(const at::Tensor& x) const {
    write(x, read(x).to(at::kLong) * 3 + offsets_.remainder(7));
  }
  // Every cell x addresses gets offset * 5 + 11: consistent however many elements alias it.
  void stamp_offsets(const at::Tensor& x) const { write(x, offsets_ * 5 + 11); }

  static double stamp(int64_t offset) { return static_cast<double>(offset * 5 + 11); }
  static double scaled(double value, int64_t offset) { return value * 3 + offset % 7; }

 private:
  static at::Tensor memory(const at::Tensor& x) {
    if (x.scalar_type() != at::kInt) {
      throw std::invalid_argument("StrideBakedKernel was compiled for int32 inputs");
    }
    const int64_t available =
        static_cast<int64_t>(x.storage().nbytes() / sizeof(int32_t)) - x.storage_offset();
    return at::from_blob(x.data_ptr(), {available}, x.options());
  }
  at::Tensor read(const at::Tensor& x) const {
    at::Tensor cells = memory(x);
    at::Tensor outside = offsets_ >= cells.numel();
    return cells.take(offsets_.clamp_max(cells.numel() - 1)).masked_fill(outside, kPoison);
  }
  void write(const at::Tensor& x, const at::Tensor& values) const {
    at::Tensor cells = memory(x);
    at::Tensor inside = offsets_ < cells.numel();
    cells.index_put_({offsets_.masked_select(inside)}, values.to(at::kInt).masked_select(inside));
  }

  at::Tensor offsets_;
};

class BoundaryTest : public ::testing::TestWithParam<at::DeviceType> {
 protected:
  at::Device device() const { return at::Device(GetParam()); }
  at::TensorOptions options(at::ScalarType dtype) const {
    return at::TensorOptions().dtype(dtype).device(device());
  }
};

std::string device_name(const ::testing::TestParamInfo<at::DeviceType>& info) {
  return c10::DeviceTypeName(info.param, /*lower_case=*/true);
}

// --- 2. Library semantics ---------------------------------------------------------------------

TEST_P(BoundaryTest, PredicateMatchesC10AndBruteForceOnRandomLayouts) {
  std::mt19937 random(1234);
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  int64_t dense_seen = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t dim = pick(0, 4);
    std::vector<int64_t> sizes(dim), strides(dim);
    for (auto& size : sizes) size = pick(0, 9) == 0 ? 0 : pick(1, 4);
    if (trial % 3 == 0) {
      // A permutation of a contiguous layout, with odd strides on size-1 dimensions.
      std::vector<int64_t> order(dim);
      for (int64_t d = 0; d < dim; ++d) order[d] = d;
      std::shuffle(order.begin(), order.end(), random);
      int64_t stride = 1;
      for (int64_t d : order) {
        strides[d] = sizes[d] == 1 && pick(0, 1) ? pick(0, 20) : stride;
        stride *= std::max<int64_t>(sizes[d], 1);
      }
    } else {
      for (auto& stride : strides) stride = pick(0, 12);
    }
    LaidOut laid = lay_out(sizes, strides, pick(0, 3), at::kLong, device());
    const at::Tensor& t = laid.view;
    std::vector<int64_t> offsets = element_offsets(t);
    std::sort(offsets.begin(), offsets.end());
    const bool distinct = std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end();
    const int64_t brute_span = offsets.empty() ? 0 : offsets.back() + 1;
    const bool brute_dense = offsets.empty() || (distinct && brute_span == t.numel());
    SCOPED_TRACE(::testing::Message() << "sizes " << t.sizes() << " strides " << t.strides());
    EXPECT_EQ(is_non_overlapping_and_dense(t), t.is_non_overlapping_and_dense());
    EXPECT_EQ(is_non_overlapping_and_dense(t), brute_dense);
    EXPECT_EQ(reachable_span(t), brute_span);
    dense_seen += brute_dense;
  }
  EXPECT_GT(dense_seen, 300);  // both answers were exercised
}

TEST_P(BoundaryTest, PredicateAndSpanOnNamedLayouts) {
  for (const NamedLayout& layout : named_layouts()) {
    SCOPED_TRACE(layout.name);
    LaidOut laid = lay_out(layout, at::kLong, device());
    EXPECT_EQ(is_non_overlapping_and_dense(laid.view), layout.dense);
    EXPECT_EQ(is_non_overlapping_and_dense(laid.view), laid.view.is_non_overlapping_and_dense());
    const std::vector<int64_t> offsets = element_offsets(laid.view);
    EXPECT_EQ(reachable_span(laid.view),
              offsets.empty() ? 0 : *std::max_element(offsets.begin(), offsets.end()) + 1);
  }
}

TEST_P(BoundaryTest, CastKeepsSizesStridesAndEveryElement) {
  for (auto [from, to] : {std::pair{at::kLong, at::kInt}, std::pair{at::kDouble, at::kFloat}}) {
    for (const NamedLayout& layout : named_layouts()) {
      SCOPED_TRACE(layout.name + " to " + c10::toString(to));
      LaidOut laid = lay_out(layout, from, device());
      const at::Tensor& src = laid.view;
      at::Tensor cast = to_dtype_preserving_layout(src, to);
      EXPECT_EQ(cast.scalar_type(), to);
      EXPECT_EQ(cast.device(), src.device());
      EXPECT_EQ(cast.sizes(), src.sizes());
      EXPECT_EQ(cast.strides(), src.strides());
      // Exactly the reachable cells are allocated: no dense intermediate, no slack.
      EXPECT_EQ(static_cast<int64_t>(cast.storage().nbytes()) -
                    cast.storage_offset() * static_cast<int64_t>(cast.element_size()),
                reachable_span(src) * static_cast<int64_t>(cast.element_size()));
      std::vector<double> expected = values_by_index(src);
      for (double& value : expected) value = cast_value(value, to);
      EXPECT_EQ(values_by_index(cast), expected);
    }
  }
}

TEST_P(BoundaryTest, DenseCastIsPlainTo) {
  for (const NamedLayout& layout : named_layouts()) {
    if (!layout.dense) continue;
    SCOPED_TRACE(layout.name);
    LaidOut laid = lay_out(layout, at::kLong, device());
    at::Tensor ours = to_dtype_preserving_layout(laid.view, at::kInt);
    at::Tensor plain = laid.view.to(at::kInt);
    EXPECT_EQ(ours.strides(), plain.strides());
    EXPECT_EQ(ours.storage_offset(), plain.storage_offset());
    EXPECT_EQ(ours.storage().nbytes(), plain.storage().nbytes());
    EXPECT_TRUE(ours.equal(plain));
  }
}

TEST_P(BoundaryTest, SameDtypeReturnsTheSourceItself) {
  for (const NamedLayout& layout : named_layouts()) {
    LaidOut laid = lay_out(layout, at::kLong, device());
    EXPECT_TRUE(to_dtype_preserving_layout(laid.view, at::kLong).is_same(laid.view)) << layout.name;
  }
}

TEST_P(BoundaryTest, ZeroElementTensors) {
  for (const NamedLayout& layout : named_layouts()) {
    if (layout.name.rfind("zero", 0) != 0) continue;
    SCOPED_TRACE(layout.name);
    LaidOut laid = lay_out(layout, at::kLong, device());
    EXPECT_EQ(reachable_span(laid.view), 0);
    EXPECT_TRUE(is_non_overlapping_and_dense(laid.view));
    at::Tensor cast = to_dtype_preserving_layout(laid.view, at::kInt);
    EXPECT_EQ(cast.numel(), 0);
    EXPECT_EQ(cast.strides(), laid.view.strides());
    at::Tensor output = allocate_output_like(laid.view, at::kInt);
    EXPECT_EQ(output.strides(), laid.view.strides());
    EXPECT_NO_THROW(write_back(laid.view, cast));
    NarrowingMemo memo;
    EXPECT_EQ(memo.narrow(laid.view, at::kInt).numel(), 0);
  }
}

TEST_P(BoundaryTest, OutputsKeepTheOriginalStrides) {
  for (const NamedLayout& layout : named_layouts()) {
    SCOPED_TRACE(layout.name);
    LaidOut laid = lay_out(layout, at::kLong, device());
    at::Tensor output = allocate_output_like(laid.view, at::kInt);
    EXPECT_EQ(output.scalar_type(), at::kInt);
    EXPECT_EQ(output.device(), laid.view.device());
    EXPECT_EQ(output.sizes(), laid.view.sizes());
    EXPECT_EQ(output.strides(), laid.view.strides());
    EXPECT_EQ(output.storage_offset(), 0);
    EXPECT_EQ(static_cast<int64_t>(output.storage().nbytes()),
              reachable_span(laid.view) * static_cast<int64_t>(sizeof(int32_t)));
  }
  // Why not empty_like: it collapses an overlapping layout to a contiguous one.
  LaidOut overlapping = lay_out({4, 8}, {4, 1}, 0, at::kLong, device());
  EXPECT_NE(at::empty_like(overlapping.view).strides(), overlapping.view.strides());
}

// The callee's writes into the narrowed copy: every cell it addresses gets a function of its
// offset (consistent under aliasing). write_back must put exactly those into the original's
// reachable cells, cast back, and leave every other cell of the storage as it was.
TEST_P(BoundaryTest, WriteBackTouchesOnlyReachableCells) {
  for (auto [wide, narrow] : {std::pair{at::kLong, at::kInt}, std::pair{at::kDouble, at::kFloat}}) {
    for (const NamedLayout& layout : named_layouts()) {
      SCOPED_TRACE(layout.name + " from " + c10::toString(narrow));
      LaidOut laid = lay_out(layout, wide, device());
      const std::vector<double> before = host_values(laid.storage);
      at::Tensor narrowed = to_dtype_preserving_layout(laid.view, narrow);
      const int64_t span = reachable_span(narrowed);
      if (span > 0) {
        at::Tensor cells = narrowed.as_strided({span}, {1});
        cells.copy_(at::arange(span, cells.options()) * 5 + 11);
      }
      write_back(laid.view, narrowed);
      std::vector<double> expected = before;
      for (int64_t offset : element_offsets(laid.view)) {
        expected[layout.offset + offset] = StrideBakedKernel::stamp(offset);
      }
      EXPECT_EQ(host_values(laid.storage), expected);
    }
  }
}

TEST_P(BoundaryTest, WriteBackOfTheSameTensorIsANoOp) {
  LaidOut laid = lay_out({3, 4}, {0, 1}, 0, at::kLong, device());
  const std::vector<double> before = host_values(laid.storage);
  write_back(laid.view, to_dtype_preserving_layout(laid.view, at::kLong));
  EXPECT_EQ(host_values(laid.storage), before);
}

TEST_P(BoundaryTest, MemoHitsWhileSourceUnchanged) {
  NarrowingMemo memo;
  for (const char* name : {"contiguous", "longformer_chunks", "expanded_gapped"}) {
    SCOPED_TRACE(name);
    const auto layouts = named_layouts();
    const NamedLayout& layout = *std::find_if(layouts.begin(), layouts.end(),
                                              [&](const NamedLayout& l) { return l.name == name; });
    LaidOut laid = lay_out(layout, at::kLong, device());
    memo.reset_stats();
    at::Tensor first = memo.narrow(laid.view, at::kInt);
    at::Tensor second = memo.narrow(laid.view, at::kInt);
    // Another handle to the same tensor is the same source.
    at::Tensor alias = laid.view;
    at::Tensor third = memo.narrow(alias, at::kInt);
    EXPECT_TRUE(second.is_same(first));
    EXPECT_TRUE(third.is_same(first));
    EXPECT_EQ(memo.stats().hits, 2);
    EXPECT_EQ(memo.stats().misses, 1);
    EXPECT_EQ(second.strides(), laid.view.strides());
    // A different target dtype is a different entry.
    EXPECT_FALSE(memo.narrow(laid.view, at::kFloat).is_same(first));
    EXPECT_EQ(memo.stats().misses, 2);
  }
}

TEST_P(BoundaryTest, MemoMissesAfterVersionBump) {
  NarrowingMemo memo;
  LaidOut laid = lay_out({6, 1024}, {512, 1}, 0, at::kLong, device());
  at::Tensor first = memo.narrow(laid.view, at::kInt);
  // An in-place write through the base bumps the version counter the view shares.
  laid.storage.add_(1);
  at::Tensor second = memo.narrow(laid.view, at::kInt);
  EXPECT_FALSE(second.is_same(first));
  EXPECT_EQ(memo.stats().hits, 0);
  EXPECT_EQ(memo.stats().misses, 2);
  EXPECT_EQ(memo.stats().dropped, 1);
  EXPECT_EQ(values_by_index(second), values_by_index(laid.view));
  // And through the tensor itself.
  at::Tensor dense = at::arange(12, options(at::kLong)).reshape({3, 4});
  at::Tensor before = memo.narrow(dense, at::kInt);
  dense.mul_(2);
  at::Tensor after = memo.narrow(dense, at::kInt);
  EXPECT_FALSE(after.is_same(before));
  EXPECT_TRUE(after.equal(dense.to(at::kInt)));
  EXPECT_TRUE(memo.narrow(dense, at::kInt).is_same(after));
}

TEST_P(BoundaryTest, MemoDropsEntriesWhenSourceDies) {
  NarrowingMemo memo;
  c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl> watch(
      at::Tensor().getIntrusivePtr());
  {
    LaidOut laid = lay_out({4, 8}, {4, 1}, 0, at::kLong, device());
    watch = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(
        laid.view.getIntrusivePtr());
    memo.narrow(laid.view, at::kInt);
    EXPECT_EQ(memo.size(), 1);
  }
  // The memo holds no strong reference: the source died with its last handle.
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(memo.size(), 1);
  EXPECT_EQ(memo.sweep(), 1);
  EXPECT_EQ(memo.size(), 0);
  // An insertion sweeps too.
  {
    at::Tensor short_lived = at::ones({5}, options(at::kLong));
    memo.narrow(short_lived, at::kInt);
  }
  at::Tensor other = at::ones({7}, options(at::kLong));
  memo.narrow(other, at::kInt);
  EXPECT_EQ(memo.size(), 1);
  EXPECT_EQ(memo.stats().dropped, 2);
}

TEST_P(BoundaryTest, MemoMissesAfterMetadataChangeOrWriteToCopy) {
  NarrowingMemo memo;
  at::Tensor src = at::arange(12, options(at::kLong)).reshape({3, 4});
  at::Tensor first = memo.narrow(src, at::kInt);
  src.transpose_(0, 1);  // same tensor, same storage, same version, new strides
  at::Tensor second = memo.narrow(src, at::kInt);
  EXPECT_FALSE(second.is_same(first));
  EXPECT_EQ(second.strides(), src.strides());
  EXPECT_TRUE(second.equal(src.to(at::kInt)));
  // A callee wrote into the copy it was given to read.
  second.add_(100);
  at::Tensor third = memo.narrow(src, at::kInt);
  EXPECT_FALSE(third.is_same(second));
  EXPECT_TRUE(third.equal(src.to(at::kInt)));
  EXPECT_EQ(memo.stats().hits, 0);
}

TEST_P(BoundaryTest, MemoCanBeSwitchedOff) {
  NarrowingMemo memo(/*enabled=*/false);
  at::Tensor src = at::arange(12, options(at::kLong));
  EXPECT_FALSE(memo.narrow(src, at::kInt).is_same(memo.narrow(src, at::kInt)));
  EXPECT_EQ(memo.stats().misses, 2);
  EXPECT_EQ(memo.size(), 0);
  memo.set_enabled(true);
  at::Tensor first = memo.narrow(src, at::kInt);
  EXPECT_TRUE(memo.narrow(src, at::kInt).is_same(first));
  memo.set_enabled(false);
  EXPECT_EQ(memo.size(), 0);
  EXPECT_FALSE(memo.narrow(src, at::kInt).is_same(first));
}

TEST_P(BoundaryTest, MemoDoesNotCacheGradOrInferenceSources) {
  NarrowingMemo memo;
  at::Tensor leaf = at::ones({4, 4}, options(at::kDouble)).requires_grad_();
  EXPECT_FALSE(memo.narrow(leaf, at::kFloat).is_same(memo.narrow(leaf, at::kFloat)));
  at::Tensor inference;
  {
    c10::InferenceMode guard;
    inference = at::ones({4, 4}, options(at::kLong));
  }
  EXPECT_FALSE(memo.narrow(inference, at::kInt).is_same(memo.narrow(inference, at::kInt)));
  EXPECT_EQ(memo.stats().uncacheable, 4);
  EXPECT_EQ(memo.size(), 0);
  // Same dtype: the source itself, nothing cached.
  at::Tensor same = at::ones({3}, options(at::kInt));
  EXPECT_TRUE(memo.narrow(same, at::kInt).is_same(same));
  EXPECT_EQ(memo.size(), 0);
}

TEST_P(BoundaryTest, MemoIsSafeAcrossThreads) {
  NarrowingMemo memo;
  std::vector<LaidOut> sources;
  for (int i = 0; i < 4; ++i) sources.push_back(lay_out({4, 8}, {4, 1}, i, at::kLong, device()));
  std::vector<std::vector<double>> expected;
  for (const LaidOut& laid : sources) expected.push_back(values_by_index(laid.view));
  std::vector<std::thread> threads;
  std::vector<int64_t> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        const size_t i = (t + round) % sources.size();
        at::Tensor narrowed = memo.narrow(sources[i].view, at::kInt);
        if (round % 10 == 0) wrong[t] += count_mismatches(expected[i], values_by_index(narrowed));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int64_t w : wrong) EXPECT_EQ(w, 0);
  EXPECT_EQ(memo.stats().hits + memo.stats().misses, 200);
  EXPECT_EQ(memo.size(), 4);
}

TEST_P(BoundaryTest, CallBoundaryStagesRunsAndWritesBack) {
  LaidOut read_only = lay_out({6, 1024}, {512, 1}, 0, at::kLong, device());
  LaidOut in_out = lay_out({6, 10}, {1, 12}, 2, at::kLong, device());
  at::Tensor passed = at::ones({2, 2}, options(at::kFloat));
  const std::vector<InputContract> contracts = {
      {at::kInt, false, std::nullopt}, {at::kInt, true, std::nullopt}, {}};
  const StrideBakedKernel summer(read_only.view);
  const StrideBakedKernel scaler(in_out.view);
  NarrowingMemo memo;

  double expected_sum = 0;
  for (double v : values_by_index(read_only.view)) expected_sum += v;
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE(call);
    const std::vector<double> old_values = values_by_index(in_out.view);
    auto outputs = call_with_narrowed_inputs(
        {read_only.view, in_out.view, passed}, contracts,
        [&](const std::vector<at::Tensor>& staged) {
          EXPECT_EQ(staged[0].scalar_type(), at::kInt);
          EXPECT_EQ(staged[0].strides(), read_only.view.strides());
          EXPECT_EQ(staged[1].strides(), in_out.view.strides());
          EXPECT_TRUE(staged[2].is_same(passed));
          scaler.scale_in_place(staged[1]);
          return std::vector<at::Tensor>{at::scalar_tensor(summer.sum(staged[0]), at::kDouble)};
        },
        &memo);
    EXPECT_EQ(outputs.at(0).item<double>(), expected_sum);
    std::vector<double> expected;
    const std::vector<int64_t> offsets = element_offsets(in_out.view);
    for (size_t i = 0; i < offsets.size(); ++i) {
      expected.push_back(StrideBakedKernel::scaled(old_values[i], offsets[i]));
    }
    EXPECT_EQ(values_by_index(in_out.view), expected);
  }
  // The read-only input was cast once; the mutated one never went through the memo.
  EXPECT_EQ(memo.stats().misses, 1);
  EXPECT_EQ(memo.stats().hits, 1);
}

// AOTInductor's case: a callee compiled for contiguous inputs that sees only data pointers.
// Given the compiled strides in the contract, every layout reaches it as the values the caller
// meant; without them (the layout kept, as for callees that read strides) it reads wrong cells.
TEST_P(BoundaryTest, CallBoundaryRestagesInputsToTheCompiledStrides) {
  for (const NamedLayout& layout : named_layouts()) {
    SCOPED_TRACE(layout.name);
    LaidOut laid = lay_out(layout, at::kLong, device());
    if (laid.view.numel() == 0) continue;
    const std::vector<int64_t> compiled = compiled_strides(laid.view.sizes());
    const StrideBakedKernel kernel(laid.view.sizes(), compiled, device());
    std::vector<double> expected;
    for (double v : values_by_index(laid.view)) expected.push_back(cast_value(v, at::kInt) * 2 + 1);
    auto run = [&](const InputContract& contract) {
      auto outputs = call_with_narrowed_inputs(
          {laid.view}, {contract}, [&](const std::vector<at::Tensor>& staged) {
            at::Tensor y = at::empty_strided(staged[0].sizes(), compiled, staged[0].options());
            kernel.affine(staged[0], y);
            return std::vector<at::Tensor>{y};
          });
      return values_by_index(outputs.at(0));
    };
    EXPECT_EQ(count_mismatches(expected, run(InputContract{at::kInt, false, compiled})), 0);
    if (!has_layout(laid.view, compiled)) {
      EXPECT_GT(count_mismatches(expected, run(InputContract{at::kInt, false, std::nullopt})), 0)
          << "a stride-baked callee must read the wrong cells of a layout it was not built for";
    }
  }
  // Same dtype, other strides: restaged all the same (float32 inputs of a float32 package).
  at::Tensor transposed = at::arange(12, options(at::kInt)).reshape({3, 4}).t();
  const StrideBakedKernel kernel(transposed.sizes(), compiled_strides(transposed.sizes()),
                                 device());
  const auto sums = call_with_narrowed_inputs(
      {transposed}, {InputContract{std::nullopt, false, compiled_strides({4, 3})}},
      [&](const std::vector<at::Tensor>& staged) {
        EXPECT_TRUE(staged[0].is_contiguous());
        at::Tensor y = at::empty({4, 3}, staged[0].options());
        kernel.affine(staged[0], y);
        return std::vector<at::Tensor>{y};
      });
  EXPECT_EQ(values_by_index(sums.at(0)), values_by_index(transposed * 2 + 1));
}

TEST_P(BoundaryTest, CallBoundaryWritesBackWhatTheCompiledStridesChanged) {
  for (const NamedLayout& layout : named_layouts()) {
    LaidOut laid = lay_out(layout, at::kLong, device());
    // A callee that writes its input assumes distinct elements: aliased layouts are left out.
    if (laid.view.numel() == 0 || has_repeated_offsets(laid.view)) continue;
    SCOPED_TRACE(layout.name);
    const std::vector<int64_t> compiled = compiled_strides(laid.view.sizes());
    const StrideBakedKernel kernel(laid.view.sizes(), compiled, device());
    const std::vector<double> old_values = values_by_index(laid.view);
    const std::vector<double> untouched = cells_from_data_pointer(laid.storage);
    call_with_narrowed_inputs({laid.view}, {InputContract{at::kInt, true, compiled}},
                              [&](const std::vector<at::Tensor>& staged) {
                                kernel.scale_in_place(staged[0]);
                                return std::vector<at::Tensor>{};
                              });
    std::vector<double> expected;
    const std::vector<int64_t> offsets = element_offsets(laid.view.sizes(), compiled);
    for (size_t i = 0; i < offsets.size(); ++i) {
      expected.push_back(StrideBakedKernel::scaled(old_values[i], offsets[i]));
    }
    EXPECT_EQ(values_by_index(laid.view), expected);
    // Cells outside the view keep their values.
    const std::vector<double> after = cells_from_data_pointer(laid.storage);
    std::set<int64_t> reachable;
    for (int64_t o : element_offsets(laid.view)) reachable.insert(o + laid.view.storage_offset());
    for (size_t c = 0; c < after.size(); ++c) {
      if (reachable.count(static_cast<int64_t>(c)) == 0) {
        EXPECT_EQ(after[c], untouched[c]) << c;
      }
    }
  }
}

TEST_P(BoundaryTest, CallBoundaryRefusesStridesOfAnotherRank) {
  at::Tensor input = at::zeros({2, 3}, options(at::kLong));
  EXPECT_THROW(call_with_narrowed_inputs(
                   {input}, {InputContract{at::kInt, false, {{1}}}},
                   [](const std::vector<at::Tensor>&) { return std::vector<at::Tensor>{}; }),
               std::invalid_argument);
}

TEST_P(BoundaryTest, InputLayoutsKeepValuesAndHaveTheirShape) {
  const std::vector<std::vector<int64_t>> shapes = {
      {4, 6}, {2, 3, 8}, {3, 1, 4}, {2, 1024}, {1, 7}};
  for (at::ScalarType dtype : {at::kLong, at::kFloat, at::kBool}) {
    for (const auto& shape : shapes) {
      at::Tensor values = at::arange(c10::multiply_integers(shape), options(at::kLong))
                              .remainder(97)
                              .reshape(shape)
                              .to(dtype);
      for (InputLayout layout : all_input_layouts()) {
        SCOPED_TRACE(::testing::Message() << input_layout_name(layout) << " " << values.sizes()
                                          << " " << c10::toString(dtype));
        LayoutedInput made = make_input_layout(values, layout);
        EXPECT_EQ(made.tensor.scalar_type(), dtype);
        EXPECT_EQ(made.tensor.device(), values.device());
        EXPECT_EQ(made.tensor.sizes(), values.sizes());
        EXPECT_TRUE(made.dense.is_contiguous());
        EXPECT_EQ(values_by_index(made.tensor), values_by_index(made.dense));
        EXPECT_NE(made.tensor.data_ptr(), values.data_ptr());
        const bool aliasing =
            layout == InputLayout::kOverlapping || layout == InputLayout::kExpanded;
        if (!aliasing) {
          EXPECT_EQ(values_by_index(made.tensor), values_by_index(values));
        }
        if (!made.applies) {
          EXPECT_TRUE(made.tensor.is_contiguous());
          continue;
        }
        switch (layout) {
          case InputLayout::kContiguous:
            EXPECT_TRUE(made.tensor.is_contiguous());
            break;
          case InputLayout::kTransposed:
            EXPECT_TRUE(is_non_overlapping_and_dense(made.tensor));
            EXPECT_FALSE(made.tensor.is_contiguous());
            break;
          case InputLayout::kGapped:
            EXPECT_FALSE(is_non_overlapping_and_dense(made.tensor));
            EXPECT_FALSE(has_repeated_offsets(made.tensor));
            break;
          case InputLayout::kOverlapping:
            EXPECT_TRUE(has_repeated_offsets(made.tensor));
            EXPECT_EQ(at::has_internal_overlap(made.tensor), at::MemOverlap::TooHard);
            break;
          case InputLayout::kExpanded:
            EXPECT_EQ(at::has_internal_overlap(made.tensor), at::MemOverlap::Yes);
            break;
        }
      }
    }
  }
  // Longformer's chunking: rows of 1024 starting every 512 elements.
  at::Tensor ids = at::arange(2 * 1024, options(at::kLong)).reshape({2, 1024});
  EXPECT_EQ(make_input_layout(ids, InputLayout::kOverlapping).tensor.strides(),
            (std::vector<int64_t>{512, 1}));
  // A backend that reads the gaps of a floating tensor gets NaN.
  LayoutedInput gapped =
      make_input_layout(at::ones({3, 4}, options(at::kFloat)), InputLayout::kGapped);
  EXPECT_TRUE(gapped.tensor.as_strided({2 * 12}, {1}).isnan().any().item<bool>());
}

TEST_P(BoundaryTest, InputLayoutsThatCannotApplySaySo) {
  struct Case {
    std::vector<int64_t> shape;
    std::vector<InputLayout> applicable;
  };
  using L = InputLayout;
  const std::vector<Case> cases = {
      {{}, {L::kContiguous}},
      {{1, 1}, {L::kContiguous}},
      {{0, 3}, {L::kContiguous}},
      {{5}, {L::kContiguous, L::kGapped, L::kExpanded}},
      {{1, 7}, {L::kContiguous, L::kGapped, L::kExpanded}},
      {{3, 1}, {L::kContiguous, L::kGapped, L::kExpanded}},
      {{3, 4}, all_input_layouts()},
  };
  for (const Case& c : cases) {
    at::Tensor values = at::ones(c.shape, options(at::kLong));
    for (InputLayout layout : all_input_layouts()) {
      const bool expected =
          std::find(c.applicable.begin(), c.applicable.end(), layout) != c.applicable.end();
      EXPECT_EQ(make_input_layout(values, layout).applies, expected)
          << input_layout_name(layout) << " on " << values.sizes();
    }
  }
}

// --- 3. The bug: stride-baked code through a naive .to() and through the boundary -------------

// Reads of an int64 tensor laid out like Longformer's chunks (rows of 1024 every 512 cells).
TEST_P(BoundaryTest, StrideBakedKernelOverlappingInt64Clone) {
  LaidOut laid = lay_out({16, 1024}, {512, 1}, 0, at::kLong, device());
  const at::Tensor& src = laid.view;
  const StrideBakedKernel kernel(src);
  std::vector<double> expected = values_by_index(src);
  double expected_sum = 0;
  for (double& v : expected) {
    expected_sum += v;
    v = v * 2 + 1;
  }

  at::Tensor naive = src.to(at::kInt);
  EXPECT_TRUE(naive.is_contiguous());  // .to() dropped the layout the kernel was built for
  at::Tensor naive_out = allocate_output_like(src, at::kInt);
  kernel.affine(naive, naive_out);
  const int64_t naive_wrong = count_mismatches(expected, values_by_index(naive_out));
  EXPECT_GT(naive_wrong, static_cast<int64_t>(expected.size()) / 2);
  EXPECT_NE(kernel.sum(naive), static_cast<int64_t>(expected_sum));

  at::Tensor narrowed = to_dtype_preserving_layout(src, at::kInt);
  at::Tensor out = allocate_output_like(src, at::kInt);
  kernel.affine(narrowed, out);
  EXPECT_EQ(count_mismatches(expected, values_by_index(out)), 0);
  EXPECT_EQ(kernel.sum(narrowed), static_cast<int64_t>(expected_sum));
  ::testing::Test::RecordProperty("naive_wrong_fraction",
                                  std::to_string(double(naive_wrong) / expected.size()));
}

// Every other element of each row: the naive copy is too short for the baked strides.
TEST_P(BoundaryTest, StrideBakedKernelGappedInt64Clone) {
  LaidOut laid = lay_out({8, 64}, {128, 2}, 1, at::kLong, device());
  const at::Tensor& src = laid.view;
  const StrideBakedKernel kernel(src);
  std::vector<double> expected = values_by_index(src);
  for (double& v : expected) v = v * 2 + 1;

  at::Tensor naive_out = allocate_output_like(src, at::kInt);
  kernel.affine(src.to(at::kInt), naive_out);
  EXPECT_GT(count_mismatches(expected, values_by_index(naive_out)),
            static_cast<int64_t>(expected.size()) / 2);

  at::Tensor out = allocate_output_like(src, at::kInt);
  kernel.affine(to_dtype_preserving_layout(src, at::kInt), out);
  EXPECT_EQ(count_mismatches(expected, values_by_index(out)), 0);
}

// An in/out int64 argument: the kernel reads and updates it in place; the result must land in
// the caller's tensor, starting from the caller's values.
TEST_P(BoundaryTest, StrideBakedKernelMutatedInt64WriteBackRoundTrip) {
  auto make = [&] { return lay_out({6, 10}, {1, 12}, 2, at::kLong, device()); };
  LaidOut laid = make();
  const StrideBakedKernel kernel(laid.view);
  const std::vector<double> before = host_values(laid.storage);
  std::vector<double> expected_storage = before;
  for (int64_t offset : element_offsets(laid.view)) {
    const int64_t cell = laid.view.storage_offset() + offset;
    expected_storage[cell] = StrideBakedKernel::scaled(before[cell], offset);
  }

  LaidOut naive = make();
  at::Tensor naive_narrowed = naive.view.to(at::kInt);
  kernel.scale_in_place(naive_narrowed);
  naive.view.copy_(naive_narrowed);
  EXPECT_GT(count_mismatches(expected_storage, host_values(naive.storage)), 0);

  call_with_narrowed_inputs({laid.view}, {{at::kInt, true, std::nullopt}},
                            [&](const std::vector<at::Tensor>& staged) {
                              kernel.scale_in_place(staged[0]);
                              return std::vector<at::Tensor>{};
                            });
  EXPECT_EQ(host_values(laid.storage), expected_storage);
}

// A view whose rows truly overlap (row stride 512 < row length 1024), written by the callee:
// each cell gets a function of its offset, so aliased elements agree.
TEST_P(BoundaryTest, StrideBakedKernelTrulyOverlappingMutatedView) {
  auto make = [&] { return lay_out({8, 1024}, {512, 1}, 0, at::kLong, device()); };
  LaidOut laid = make();
  ASSERT_EQ(at::has_internal_overlap(laid.view), at::MemOverlap::TooHard);
  const StrideBakedKernel kernel(laid.view);
  std::vector<double> expected_storage = host_values(laid.storage);
  for (int64_t offset : element_offsets(laid.view)) {
    expected_storage[offset] = StrideBakedKernel::stamp(offset);
  }

  LaidOut naive = make();
  at::Tensor naive_narrowed = naive.view.to(at::kInt);
  kernel.stamp_offsets(naive_narrowed);
  naive.view.copy_(naive_narrowed);
  EXPECT_GT(count_mismatches(expected_storage, host_values(naive.storage)), 1000);

  call_with_narrowed_inputs({laid.view}, {{at::kInt, true, std::nullopt}},
                            [&](const std::vector<at::Tensor>& staged) {
                              kernel.stamp_offsets(staged[0]);
                              return std::vector<at::Tensor>{};
                            });
  EXPECT_EQ(host_values(laid.storage), expected_storage);
}

// A broadcast (stride 0) mutated argument over a gapped storage whose gaps hold values beyond
// int32: the naive write-back is refused by copy_; the boundary writes the reachable cells only.
TEST_P(BoundaryTest, StrideBakedKernelMutatedExpandedView) {
  LaidOut laid = lay_out({4, 3, 16}, {0, 40, 2}, 1, at::kLong, device());
  ASSERT_EQ(at::has_internal_overlap(laid.view), at::MemOverlap::Yes);
  const StrideBakedKernel kernel(laid.view);
  std::vector<double> expected_storage = host_values(laid.storage);
  for (int64_t offset : element_offsets(laid.view)) {
    expected_storage[1 + offset] = StrideBakedKernel::stamp(offset);
  }

  at::Tensor naive_narrowed = laid.view.to(at::kInt);
  kernel.stamp_offsets(naive_narrowed);
  EXPECT_THROW(laid.view.copy_(naive_narrowed), c10::Error);

  call_with_narrowed_inputs({laid.view}, {{at::kInt, true, std::nullopt}},
                            [&](const std::vector<at::Tensor>& staged) {
                              kernel.stamp_offsets(staged[0]);
                              return std::vector<at::Tensor>{};
                            });
  EXPECT_EQ(host_values(laid.storage), expected_storage);
}

}  // namespace
}  // namespace zoobench::boundary
