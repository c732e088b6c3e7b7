// --channels-last: 4-D weights and inputs change layout, not values; the rest stays as it was.
#include "zoobench/runner/channels_last.h"

#include <gtest/gtest.h>

namespace zoobench {
namespace {

TEST(ChannelsLast, FourDimensionalWeightsAndInputsTakeNhwcStridesWithTheSameValues) {
  torch::jit::Module outer("outer"), inner("inner");
  const at::Tensor kernel = torch::randn({4, 3, 2, 2});
  const at::Tensor bias = torch::randn({4});
  inner.register_parameter("weight", kernel.clone(), /*is_buffer=*/false);
  inner.register_parameter("bias", bias.clone(), /*is_buffer=*/false);
  outer.register_module("conv", inner);
  outer.register_buffer("mask", torch::ones({1, 4, 3, 3}));

  to_channels_last(outer);
  const at::Tensor weight = outer.attr("conv").toModule().attr("weight").toTensor();
  EXPECT_TRUE(weight.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(weight.is_contiguous());
  EXPECT_TRUE(torch::equal(weight, kernel));
  EXPECT_TRUE(outer.attr("mask").toTensor().is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(torch::equal(outer.attr("conv").toModule().attr("bias").toTensor(), bias));

  const at::Tensor image = torch::randn({2, 3, 5, 5});
  const auto inputs = channels_last_inputs({image, torch::randn({2, 3}), c10::IValue(int64_t{7})});
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_TRUE(inputs[0].toTensor().is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(inputs[0].toTensor().is_contiguous());
  EXPECT_TRUE(torch::equal(inputs[0].toTensor(), image));
  EXPECT_TRUE(inputs[1].toTensor().is_contiguous());
  EXPECT_EQ(inputs[2].toInt(), 7);
}

}  // namespace
}  // namespace zoobench
