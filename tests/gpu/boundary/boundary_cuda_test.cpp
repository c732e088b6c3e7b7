// The boundary's shared cases (tests/unit/boundary/boundary_cases.h) on CUDA, plus the check
// that the boundary never makes the host wait for the device.
#include <c10/cuda/CUDAFunctions.h>
#include <gtest/gtest.h>

#include "unit/boundary/boundary_cases.h"

namespace zoobench::boundary {
namespace {

INSTANTIATE_TEST_SUITE_P(Cuda, BoundaryTest, ::testing::Values(at::kCUDA), device_name);

// CUDA's sync debug mode set to "error" for a scope: any synchronizing call throws.
class SynchronizationForbidden {
 public:
  SynchronizationForbidden() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SynchronizationForbidden() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  }
};

TEST(BoundaryCuda, NoHostSynchronization) {
  std::vector<LaidOut> sources;
  for (const NamedLayout& layout : named_layouts()) {
    sources.push_back(lay_out(layout, at::kLong, at::Device(at::kCUDA)));
  }
  NarrowingMemo memo;
  c10::cuda::device_synchronize();
  {
    SynchronizationForbidden forbidden;
    for (const LaidOut& laid : sources) {
      at::Tensor narrowed = to_dtype_preserving_layout(laid.view, at::kInt);
      at::Tensor output = allocate_output_like(laid.view, at::kInt);
      write_back(laid.view, narrowed);
      memo.narrow(laid.view, at::kInt);
      memo.narrow(laid.view, at::kInt);
      call_with_narrowed_inputs({laid.view}, {{at::kInt, true, std::nullopt}},
                                [](const std::vector<at::Tensor>& staged) { return staged; });
      for (InputLayout layout : all_input_layouts()) make_input_layout(laid.view, layout);
    }
  }
  c10::cuda::device_synchronize();
  EXPECT_EQ(memo.stats().hits, static_cast<int64_t>(sources.size()));
}

}  // namespace
}  // namespace zoobench::boundary
