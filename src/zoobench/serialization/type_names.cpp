// The Python names torch.save uses for storage types and dtypes.
#include <stdexcept>
#include <utility>

#include "zoobench/serialization/pickle.h"

namespace zoobench::serialization::detail {
namespace {

using c10::ScalarType;

// Canonical entry first: the writer uses it.
const std::vector<std::pair<std::string, ScalarType>>& storage_types() {
  static const std::vector<std::pair<std::string, ScalarType>> table = {
      {"FloatStorage", ScalarType::Float},
      {"DoubleStorage", ScalarType::Double},
      {"HalfStorage", ScalarType::Half},
      {"BFloat16Storage", ScalarType::BFloat16},
      {"LongStorage", ScalarType::Long},
      {"IntStorage", ScalarType::Int},
      {"ShortStorage", ScalarType::Short},
      {"CharStorage", ScalarType::Char},
      {"ByteStorage", ScalarType::Byte},
      {"BoolStorage", ScalarType::Bool},
      {"ComplexFloatStorage", ScalarType::ComplexFloat},
      {"ComplexDoubleStorage", ScalarType::ComplexDouble},
  };
  return table;
}

const std::vector<std::pair<std::string, ScalarType>>& dtype_names() {
  static const std::vector<std::pair<std::string, ScalarType>> table = {
      {"float32", ScalarType::Float},
      {"float", ScalarType::Float},
      {"float64", ScalarType::Double},
      {"double", ScalarType::Double},
      {"float16", ScalarType::Half},
      {"half", ScalarType::Half},
      {"bfloat16", ScalarType::BFloat16},
      {"int64", ScalarType::Long},
      {"long", ScalarType::Long},
      {"int32", ScalarType::Int},
      {"int", ScalarType::Int},
      {"int16", ScalarType::Short},
      {"short", ScalarType::Short},
      {"int8", ScalarType::Char},
      {"uint8", ScalarType::Byte},
      {"bool", ScalarType::Bool},
      {"complex64", ScalarType::ComplexFloat},
      {"cfloat", ScalarType::ComplexFloat},
      {"complex128", ScalarType::ComplexDouble},
      {"cdouble", ScalarType::ComplexDouble},
  };
  return table;
}

}  // namespace

std::optional<ScalarType> dtype_of_storage_type(const std::string& name) {
  for (const auto& [storage, dtype] : storage_types()) {
    if (storage == name) return dtype;
  }
  return std::nullopt;
}

std::string storage_type_of_dtype(ScalarType dtype) {
  for (const auto& [storage, type] : storage_types()) {
    if (type == dtype) return storage;
  }
  throw std::runtime_error(std::string("no torch storage type for dtype ") + c10::toString(dtype));
}

std::optional<ScalarType> dtype_of_python_name(const std::string& name) {
  for (const auto& [python, dtype] : dtype_names()) {
    if (python == name) return dtype;
  }
  return std::nullopt;
}

std::string python_name_of_dtype(ScalarType dtype) {
  for (const auto& [python, type] : dtype_names()) {
    if (type == dtype) return python;
  }
  throw std::runtime_error(std::string("no Python name for dtype ") + c10::toString(dtype));
}

}  // namespace zoobench::serialization::detail
