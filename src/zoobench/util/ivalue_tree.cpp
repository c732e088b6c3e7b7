#include "zoobench/util/ivalue_tree.h"

namespace zoobench {

c10::IValue map_tensors(const c10::IValue& value, const std::function<at::Tensor(const at::Tensor&)>& f) {
  if (value.isTensor()) return f(value.toTensor());
  if (value.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const auto& e : value.toTupleRef().elements()) elements.push_back(map_tensors(e, f));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (value.isList()) {
    c10::impl::GenericList list(c10::AnyType::get());
    for (const auto& e : value.toListRef()) list.push_back(map_tensors(e, f));
    return list;
  }
  if (value.isGenericDict()) {
    auto source = value.toGenericDict();
    c10::impl::GenericDict dict(source.keyType(), source.valueType());
    for (const auto& item : source) dict.insert(item.key(), map_tensors(item.value(), f));
    return dict;
  }
  return value;
}

}  // namespace zoobench
