// The training step's optimizer: SGD's multi-tensor update against the formula computed in
// float64, parameters the backward did not reach left alone, and gradients set to None so the
// next backward writes fresh gradients instead of adding to old ones.
#include "zoobench/backends/training_optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace zoobench {
namespace {

struct Problem {
  at::Tensor x = at::randn({4, 5});
  at::Tensor w = at::randn({5, 3}).requires_grad_();
  at::Tensor b = at::randn({3}).requires_grad_();
  at::Tensor unused = at::randn({2}).requires_grad_();  // not in the loss: no gradient
  void backward() { (at::mm(x, w) + b).pow(2).sum().backward(); }
};

TEST(TrainingOptimizer, SgdSubtractsTheLearningRateTimesTheGradient) {
  torch::manual_seed(0);
  Problem p;
  OptimizerSettings sgd{"sgd", 0.1};
  TrainingOptimizer optimizer({p.w, p.b, p.unused}, sgd);
  p.backward();
  // The gradient of sum((xw + b)^2), in float64, independently of autograd.
  at::Tensor x64 = p.x.to(at::kDouble), w64 = p.w.detach().to(at::kDouble), b64 = p.b.detach().to(at::kDouble);
  at::Tensor residual = at::mm(x64, w64) + b64;
  at::Tensor expected_w = w64 - 0.1 * 2 * at::mm(x64.t(), residual);
  at::Tensor expected_b = b64 - 0.1 * 2 * residual.sum(0);
  at::Tensor unused_before = p.unused.detach().clone();
  optimizer.step();
  EXPECT_TRUE(at::allclose(p.w.detach().to(at::kDouble), expected_w, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(p.b.detach().to(at::kDouble), expected_b, 1e-5, 1e-5));
  EXPECT_TRUE(at::equal(p.unused.detach(), unused_before));
}

TEST(TrainingOptimizer, ZeroGradSetsNoneAndTheNextBackwardIsNotAccumulated) {
  torch::manual_seed(1);
  Problem p;
  TrainingOptimizer optimizer({p.w, p.b, p.unused}, OptimizerSettings{"sgd", 0.0});  // weights stay
  p.backward();
  at::Tensor first = p.w.grad().clone();
  optimizer.zero_grad();
  EXPECT_FALSE(p.w.grad().defined());
  EXPECT_FALSE(p.b.grad().defined());
  p.backward();
  EXPECT_TRUE(at::equal(p.w.grad(), first));  // not 2x first
  optimizer.step();                           // lr 0: a step with fresh gradients changes nothing
  EXPECT_TRUE(at::equal(p.w.grad(), first));
}

TEST(TrainingOptimizer, AdamStillStepsThroughTorchOptim) {
  torch::manual_seed(2);
  Problem p;
  at::Tensor before = p.w.detach().clone();
  TrainingOptimizer optimizer({p.w, p.b, p.unused}, OptimizerSettings{"adam", 0.01});
  p.backward();
  optimizer.step();
  // Adam's first step moves every reached weight by about lr (its update is m / sqrt(v) ~ sign).
  at::Tensor moved = (p.w.detach() - before).abs();
  EXPECT_TRUE(at::allclose(moved, at::full_like(moved, 0.01), 0, 1e-4));
}

}  // namespace
}  // namespace zoobench
