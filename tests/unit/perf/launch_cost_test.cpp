// The host's cost of one small op (launch_cost.h) is per op: the same whether measured over few
// ops or many (a total per batch would grow 16 times from 50 ops to 800), and positive. The
// factor allowed is wide: this runs beside other tests, and the cost itself is not asserted.
#include "zoobench/perf/launch_cost.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zoobench {
namespace {

TEST(OpLaunchCost, IsACostPerOp) {
  const c10::Device cpu(c10::kCPU);
  const double few = op_launch_cost_us(cpu, 50), many = op_launch_cost_us(cpu, 800);
  ASSERT_TRUE(std::isfinite(few) && std::isfinite(many));
  EXPECT_GT(few, 0.0);
  EXPECT_GT(many, 0.0);
  EXPECT_LT(many / few, 8.0) << few << " us over 50 ops, " << many << " us over 800";
  EXPECT_GT(many / few, 1.0 / 8.0) << few << " us over 50 ops, " << many << " us over 800";
}

}  // namespace
}  // namespace zoobench
