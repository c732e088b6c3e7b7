// Input layouts for --input-layouts: the same (or, where aliasing forces it, derived) values laid
// out the ways compiled code gets them in real models, each with a dense twin for eager.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "zoobench/boundary/boundary.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench::boundary {
namespace {

struct NamedLayout {
  InputLayout layout;
  std::string_view name;
};

constexpr NamedLayout kNamedLayouts[] = {
    {InputLayout::kContiguous, "contiguous"}, {InputLayout::kTransposed, "transposed"},
    {InputLayout::kGapped, "gapped"},         {InputLayout::kOverlapping, "overlapping"},
    {InputLayout::kExpanded, "expanded"},
};

std::string valid_names() {
  std::vector<std::string> names;
  for (const auto& named : kNamedLayouts) names.emplace_back(named.name);
  return join(names, ", ");
}

at::Tensor dense_copy(const at::Tensor& t) { return t.clone(at::MemoryFormat::Contiguous); }

// The dimensions whose strides a layout can change: those of size >= 2.
std::vector<int64_t> long_dims(const at::Tensor& t) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) >= 2) dims.push_back(d);
  }
  return dims;
}

// What the gaps hold: a value differing from its neighbour, so a reader of the gaps goes wrong
// visibly (NaN for floating types; for integers ~v, which stays a small number for small ids).
at::Tensor gap_filler(const at::Tensor& values) {
  if (values.is_floating_point() || values.is_complex()) {
    return at::full_like(values, std::numeric_limits<double>::quiet_NaN());
  }
  if (values.scalar_type() == at::kBool) return values.logical_not();
  return values.bitwise_not();
}

LayoutedInput not_applicable(const at::Tensor& values) {
  return {dense_copy(values), dense_copy(values), false};
}

LayoutedInput transposed(const at::Tensor& values, const std::vector<int64_t>& dims) {
  if (dims.size() < 2) return not_applicable(values);
  const int64_t a = dims[dims.size() - 2];
  const int64_t b = dims.back();
  at::Tensor tensor = dense_copy(values.transpose(a, b)).transpose(a, b);
  return {tensor, dense_copy(values), true};
}

LayoutedInput gapped(const at::Tensor& values, const std::vector<int64_t>& dims) {
  if (dims.empty()) return not_applicable(values);
  const int64_t d = dims.back();
  const int64_t length = values.size(d);
  std::vector<int64_t> buffer_sizes = values.sizes().vec();
  buffer_sizes[d] = 2 * length;
  at::Tensor buffer = at::empty(buffer_sizes, values.options());
  at::Tensor tensor = buffer.slice(d, 0, 2 * length, 2);
  tensor.copy_(values);
  buffer.slice(d, 1, 2 * length, 2).copy_(gap_filler(values));
  return {tensor, dense_copy(values), true};
}

LayoutedInput overlapping(const at::Tensor& values, const std::vector<int64_t>& dims) {
  if (dims.size() < 2) return not_applicable(values);
  // Rows are the last dimension of size >= 2 (dimensions after it have size 1); every row
  // starts half a row after the previous one.
  const int64_t row_dim = dims.back();
  const int64_t row_length = values.size(row_dim);
  const int64_t row_stride = row_length / 2;
  std::vector<int64_t> strides(values.dim(), 1);
  int64_t step = row_stride;
  for (int64_t d = row_dim - 1; d >= 0; --d) {
    strides[d] = step;
    step *= values.size(d);
  }
  const int64_t rows = values.numel() / row_length;
  const int64_t cells = (rows - 1) * row_stride + row_length;  // <= numel: rows overlap
  at::Tensor buffer = dense_copy(values.reshape({-1}).narrow(0, 0, cells));
  at::Tensor tensor = buffer.as_strided(values.sizes(), strides);
  return {tensor, dense_copy(tensor), true};
}

LayoutedInput expanded(const at::Tensor& values, const std::vector<int64_t>& dims) {
  if (dims.empty()) return not_applicable(values);
  const int64_t d = dims.front();
  at::Tensor tensor = dense_copy(values.narrow(d, 0, 1)).expand(values.sizes());
  return {tensor, dense_copy(tensor), true};
}

}  // namespace

std::string_view input_layout_name(InputLayout layout) {
  for (const auto& named : kNamedLayouts) {
    if (named.layout == layout) return named.name;
  }
  return "unknown";
}

InputLayout parse_input_layout(std::string_view name) {
  for (const auto& named : kNamedLayouts) {
    if (named.name == name) return named.layout;
  }
  throw UsageError("unknown input layout '" + std::string(name) +
                   "'; valid layouts: " + valid_names());
}

std::vector<InputLayout> parse_input_layouts(std::string_view comma_separated) {
  std::vector<InputLayout> layouts;
  for (const std::string& item : split(comma_separated, ',')) {
    const std::string name = trim(item);
    if (name.empty()) {
      throw UsageError("empty name in input layouts '" + std::string(comma_separated) +
                       "'; give a comma-separated list of: " + valid_names());
    }
    const InputLayout layout = parse_input_layout(name);
    if (std::find(layouts.begin(), layouts.end(), layout) == layouts.end()) {
      layouts.push_back(layout);
    }
  }
  return layouts;
}

const std::vector<InputLayout>& all_input_layouts() {
  static const std::vector<InputLayout> layouts = [] {
    std::vector<InputLayout> all;
    for (const auto& named : kNamedLayouts) all.push_back(named.layout);
    return all;
  }();
  return layouts;
}

LayoutedInput make_input_layout(const at::Tensor& values, InputLayout layout) {
  if (!values.defined() || values.layout() != at::kStrided) {
    throw std::invalid_argument("make_input_layout: needs a defined strided tensor");
  }
  if (layout == InputLayout::kContiguous) return {dense_copy(values), dense_copy(values), true};
  if (values.numel() == 0) return not_applicable(values);
  const std::vector<int64_t> dims = long_dims(values);
  switch (layout) {
    case InputLayout::kTransposed:
      return transposed(values, dims);
    case InputLayout::kGapped:
      return gapped(values, dims);
    case InputLayout::kOverlapping:
      return overlapping(values, dims);
    case InputLayout::kExpanded:
      return expanded(values, dims);
    case InputLayout::kContiguous:
      break;
  }
  return not_applicable(values);
}

}  // namespace zoobench::boundary
