// reduce_to_scalar_loss and training_loss against sums worked out element by element in plain
// C++ (docs/formats.md: tensor -> sum / numel; list/tuple -> mean of the elements' losses;
// dict -> mean over values; non-floating tensors ignored), and the gradient it sends back.
#include "zoobench/zoo/training_loss.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <vector>

namespace zoobench {
namespace {

// sum / numel computed on the host, element by element.
double hand_mean(const at::Tensor& t) {
  at::Tensor c = t.to(at::kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  double sum = 0;
  for (int64_t i = 0; i < c.numel(); ++i) sum += p[i];
  return sum / static_cast<double>(c.numel());
}

at::Tensor grid(std::vector<int64_t> shape, double start, double step) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return (at::arange(n, at::kDouble) * step + start).reshape(shape);
}

c10::IValue tuple(std::vector<c10::IValue> items) {
  return c10::ivalue::Tuple::create(std::move(items));
}

c10::IValue list(std::vector<c10::IValue> items) {
  c10::impl::GenericList l(c10::AnyType::get());
  for (auto& item : items) l.push_back(std::move(item));
  return l;
}

c10::IValue dict(std::vector<std::pair<std::string, c10::IValue>> items) {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  for (auto& [k, v] : items) d.insert(k, std::move(v));
  return d;
}

TEST(ReduceToScalarLoss, TensorIsSumOverNumel) {
  at::Tensor t = grid({2, 3, 4}, -1.5, 0.25);
  at::Tensor loss = reduce_to_scalar_loss(t);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item<double>(), hand_mean(t), 1e-12);
  EXPECT_EQ(loss.scalar_type(), at::kDouble);
  EXPECT_NEAR(reduce_to_scalar_loss(t.to(at::kFloat)).item<double>(), hand_mean(t), 1e-6);
}

TEST(ReduceToScalarLoss, TupleAndListAreTheMeanOfTheirElements) {
  at::Tensor a = grid({3}, 1, 1);       // mean 2
  at::Tensor b = grid({2, 2}, 10, 10);  // mean 25
  const double expected = (hand_mean(a) + hand_mean(b)) / 2;
  EXPECT_NEAR(reduce_to_scalar_loss(tuple({a, b})).item<double>(), expected, 1e-12);
  EXPECT_NEAR(reduce_to_scalar_loss(list({a, b})).item<double>(), expected, 1e-12);
}

TEST(ReduceToScalarLoss, NestedContainersAndDicts) {
  at::Tensor a = grid({4}, 0.5, 0.5), b = grid({2, 3}, -2, 0.75), c = grid({5}, 3, -1);
  // dict: mean over values; the inner tuple counts as one element of the outer tuple.
  c10::IValue outputs = tuple({a, dict({{"x", b}, {"y", tuple({c, a})}})});
  const double inner = (hand_mean(c) + hand_mean(a)) / 2;
  const double d = (hand_mean(b) + inner) / 2;
  const double expected = (hand_mean(a) + d) / 2;
  EXPECT_NEAR(reduce_to_scalar_loss(outputs).item<double>(), expected, 1e-12);
}

TEST(ReduceToScalarLoss, NonFloatingTensorsAreIgnoredNotCounted) {
  at::Tensor logits = grid({2, 5}, -1, 0.3);
  at::Tensor ids = at::arange(10, at::kLong);
  at::Tensor mask = at::ones({3}, at::kBool);
  EXPECT_NEAR(reduce_to_scalar_loss(tuple({logits, ids, mask})).item<double>(), hand_mean(logits),
              1e-12);
  EXPECT_NEAR(reduce_to_scalar_loss(dict({{"ids", ids}, {"logits", logits}})).item<double>(),
              hand_mean(logits), 1e-12);
}

TEST(ReduceToScalarLoss, NothingFloatingIsAnError) {
  EXPECT_THROW(reduce_to_scalar_loss(at::arange(3, at::kLong)), std::runtime_error);
  EXPECT_THROW(reduce_to_scalar_loss(tuple({at::arange(3, at::kLong), c10::IValue(int64_t{4})})),
               std::runtime_error);
  EXPECT_THROW(reduce_to_scalar_loss(c10::IValue(3.0)), std::runtime_error);
}

// d(loss)/d(t_i) = 1 / numel(t) / (number of elements of the tuple): what backward sees.
TEST(ReduceToScalarLoss, GradientIsOneOverCount) {
  at::Tensor a = grid({2, 3}, 0, 1).requires_grad_(true);
  at::Tensor b = grid({4}, 0, 1).requires_grad_(true);
  at::Tensor loss = reduce_to_scalar_loss(tuple({a * 2, b}));
  loss.backward();
  EXPECT_TRUE(at::allclose(a.grad(), at::full({2, 3}, 2.0 / 6 / 2, at::kDouble)));
  EXPECT_TRUE(at::allclose(b.grad(), at::full({4}, 1.0 / 4 / 2, at::kDouble)));
}

TEST(TrainingLoss, FirstOutputAndScale) {
  at::Tensor own_loss = at::tensor(2.5, at::kDouble);
  at::Tensor logits = grid({2, 2}, 1, 1);
  // first_output: the model's own loss, as HuggingFace models given labels return it.
  EXPECT_DOUBLE_EQ(training_loss(tuple({own_loss, logits}), "first_output", 1.0).item<double>(),
                   2.5);
  EXPECT_DOUBLE_EQ(
      training_loss(dict({{"loss", own_loss}, {"logits", logits}}), "first_output", 1.0)
          .item<double>(),
      2.5);
  // A first output with more than one element is reduced like any output.
  EXPECT_NEAR(training_loss(tuple({logits, own_loss}), "first_output", 1.0).item<double>(),
              hand_mean(logits), 1e-12);
  EXPECT_NEAR(
      training_loss(tuple({logits, own_loss}), "mean_of_floating_outputs", 1.0).item<double>(),
      (hand_mean(logits) + 2.5) / 2, 1e-12);
  // loss_scale (upstream timm's mobilevit_s: / 1000).
  EXPECT_NEAR(training_loss(logits, "mean_of_floating_outputs", 0.001).item<double>(),
              hand_mean(logits) / 1000, 1e-15);
  // ... divided as upstream divides: bit for bit in float32, where times 0.001 rounds otherwise.
  const at::Tensor loss = at::full({}, 0.7, at::kFloat);
  ASSERT_NE((loss * 0.001).item<float>(), (loss / 1000.0).item<float>());
  EXPECT_EQ(training_loss(loss, "first_output", 0.001).item<float>(), (loss / 1000.0).item<float>());
  EXPECT_THROW(training_loss(tuple({c10::IValue(int64_t{1}), logits}), "first_output", 1.0),
               std::runtime_error);
}

}  // namespace
}  // namespace zoobench
