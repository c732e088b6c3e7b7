// Loss reduction for training steps.
#include "zoobench/zoo/training_loss.h"

#include <optional>
#include <stdexcept>

namespace zoobench {
namespace {

std::optional<at::Tensor> reduce(const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    if (!t.is_floating_point() && !t.is_complex()) return std::nullopt;
    return t.sum() / static_cast<double>(std::max<int64_t>(t.numel(), 1));
  }
  std::vector<at::Tensor> parts;
  auto add = [&](const c10::IValue& element) {
    if (auto part = reduce(element)) parts.push_back(*part);
  };
  if (value.isTuple()) {
    for (const auto& element : value.toTupleRef().elements()) add(element);
  } else if (value.isList()) {
    for (const auto& element : value.toListRef()) add(element);
  } else if (value.isGenericDict()) {
    for (const auto& item : value.toGenericDict()) add(item.value());
  } else {
    return std::nullopt;
  }
  if (parts.empty()) return std::nullopt;
  at::Tensor total = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) total = total + parts[i];
  return total / static_cast<double>(parts.size());
}

c10::IValue first_element(const c10::IValue& value) {
  if (value.isTuple() && !value.toTupleRef().elements().empty()) return value.toTupleRef().elements()[0];
  if (value.isList() && !value.toListRef().empty()) return value.toListRef()[0];
  if (value.isGenericDict() && !value.toGenericDict().empty()) return value.toGenericDict().begin()->value();
  return value;
}

}  // namespace

at::Tensor reduce_to_scalar_loss(const c10::IValue& outputs) {
  auto loss = reduce(outputs);
  if (!loss) throw std::runtime_error("the model's outputs hold no floating tensor to build a training loss from");
  return *loss;
}

at::Tensor training_loss(const c10::IValue& outputs, const std::string& rule, double scale) {
  at::Tensor loss;
  if (rule == "first_output") {
    c10::IValue first = first_element(outputs);
    if (!first.isTensor()) throw std::runtime_error("training.loss is first_output but the first output is not a tensor");
    loss = first.toTensor();
    if (loss.numel() != 1) loss = reduce_to_scalar_loss(first);
  } else {
    loss = reduce_to_scalar_loss(outputs);
  }
  // Upstream's scaled_compute_loss divides by 1000; a float32 loss times 0.001 can round
  // otherwise, so the scale's inverse divides, as there.
  return scale == 1.0 ? loss : loss / (1.0 / scale);
}

}  // namespace zoobench
