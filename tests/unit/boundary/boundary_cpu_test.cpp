// The boundary's shared cases (boundary_cases.h) on the CPU, plus what is device-independent:
// layout names and the amplification log line.
#include <gtest/gtest.h>

#include "unit/boundary/boundary_cases.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"

namespace zoobench::boundary {
namespace {

INSTANTIATE_TEST_SUITE_P(Cpu, BoundaryTest, ::testing::Values(at::kCPU), device_name);

TEST(InputLayoutNames, ParseAndFormatRoundTrip) {
  for (InputLayout layout : all_input_layouts()) {
    EXPECT_EQ(parse_input_layout(input_layout_name(layout)), layout);
  }
  EXPECT_EQ(all_input_layouts().size(), 5u);
  EXPECT_EQ(parse_input_layouts("contiguous, gapped,expanded,gapped"),
            (std::vector<InputLayout>{InputLayout::kContiguous, InputLayout::kGapped,
                                      InputLayout::kExpanded}));
  EXPECT_EQ(parse_input_layouts("contiguous,transposed,gapped,overlapping,expanded"),
            all_input_layouts());
}

TEST(InputLayoutNames, ErrorsNameTheProblemAndTheChoices) {
  try {
    parse_input_layouts("contiguous,strided");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'strided'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("contiguous, transposed, gapped, overlapping, expanded"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_input_layouts("contiguous,,gapped"), UsageError);
  EXPECT_THROW(parse_input_layouts(""), UsageError);
}

class LogLevelGuard {
 public:
  explicit LogLevelGuard(log::Level level) : saved_(log::current_level()) { log::set_level(level); }
  ~LogLevelGuard() { log::set_level(saved_); }

 private:
  log::Level saved_;
};

TEST(BoundaryLog, AmplifiedCastIsLoggedAtDebugLevelOnly) {
  // 16 elements spread over 304 cells: 19x the memory of a dense copy.
  at::Tensor amplified = at::zeros({400}, at::kLong).as_strided({4, 4}, {100, 1});
  at::Tensor modest = at::zeros({400}, at::kLong).as_strided({4, 4}, {8, 2});  // 31 cells
  {
    LogLevelGuard level(log::Level::kDebug);
    ::testing::internal::CaptureStderr();
    to_dtype_preserving_layout(amplified, at::kInt);
    to_dtype_preserving_layout(modest, at::kInt);
    const std::string logged = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(logged.find("304 storage elements for a 16-element tensor"), std::string::npos)
        << logged;
    EXPECT_EQ(logged.find("16-element tensor", logged.find("16-element tensor") + 1),
              std::string::npos)
        << "only the amplified cast is logged: " << logged;
  }
  {
    LogLevelGuard level(log::Level::kInfo);
    ::testing::internal::CaptureStderr();
    to_dtype_preserving_layout(amplified, at::kInt);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  }
}

TEST(BoundaryErrors, NonStridedTensorsAreRefusedByTheLayoutFunctions) {
  at::Tensor sparse = at::eye(3, at::kLong).to_sparse();
  EXPECT_THROW(reachable_span(sparse), std::invalid_argument);
  EXPECT_THROW(is_non_overlapping_and_dense(sparse), std::invalid_argument);
  // The cast has no layout to keep and falls back to .to().
  EXPECT_EQ(to_dtype_preserving_layout(sparse, at::kInt).scalar_type(), at::kInt);
  EXPECT_THROW(call_with_narrowed_inputs({sparse}, {}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace zoobench::boundary
