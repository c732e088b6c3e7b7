// The numerics switches of accuracy and performance runs, as upstream's harness sets them:
// accuracy deterministic without TF32; performance with TF32 allowed and cuDNN's benchmark mode
// at PyTorch's default (off), which upstream's performance runs keep. The switches are process
// state, so they can be read on a machine without a GPU; tests/gpu checks what they do.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "zoobench/util/compat.h"

namespace zoobench {
namespace {

class NumericsSettings : public ::testing::Test {
 protected:
  void TearDown() override { compat::set_deterministic_numerics(false); }
};

TEST_F(NumericsSettings, AccuracyIsDeterministicWithoutTf32) {
  compat::set_deterministic_numerics(true);
  auto& context = at::globalContext();
  EXPECT_TRUE(context.deterministicAlgorithms());
  // enforced, as upstream's use_deterministic_algorithms(True): under warn_only an op with a
  // nondeterministic default (memory-efficient attention's backward) keeps it
  EXPECT_FALSE(context.deterministicAlgorithmsWarnOnly());
  EXPECT_TRUE(context.deterministicCuDNN());
  EXPECT_FALSE(context.benchmarkCuDNN());
  EXPECT_FALSE(context.allowTF32CuBLAS());
  EXPECT_FALSE(context.allowTF32CuDNN());
}

// Upstream's exception list (setup_determinism's models that "do not support
// use_deterministic_algorithms"): the algorithms are not asked for, the rest is as for any model.
TEST_F(NumericsSettings, AModelOfUpstreamsExceptionListGetsNoDeterministicAlgorithms) {
  compat::set_deterministic_numerics(true, /*deterministic_algorithms=*/false);
  auto& context = at::globalContext();
  EXPECT_FALSE(context.deterministicAlgorithms());
  EXPECT_TRUE(context.deterministicCuDNN());
  EXPECT_FALSE(context.allowTF32CuBLAS());
}

TEST_F(NumericsSettings, PerformanceAllowsTf32AndKeepsCudnnBenchmarkOffAsUpstream) {
  compat::set_deterministic_numerics(true);
  compat::set_deterministic_numerics(false);
  auto& context = at::globalContext();
  EXPECT_FALSE(context.deterministicAlgorithms());
  EXPECT_FALSE(context.deterministicCuDNN());
  EXPECT_FALSE(context.benchmarkCuDNN()) << "upstream's performance runs leave benchmark mode off";
  EXPECT_TRUE(context.allowTF32CuBLAS());
  EXPECT_TRUE(context.allowTF32CuDNN());
}

// The accuracy check's fixed cuBLAS workspace is gone when the timing starts: PyTorch parses the
// variable on every cuBLAS call while it is set, which slows a launch-bound eager side that is
// timed in the process that checked it. A value the user set stays, as it came.
TEST_F(NumericsSettings, TheCublasWorkspaceTheCheckSetIsGoneForTheTiming) {
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
  compat::set_deterministic_numerics(true);
  ASSERT_NE(std::getenv("CUBLAS_WORKSPACE_CONFIG"), nullptr);
  EXPECT_EQ(std::string(std::getenv("CUBLAS_WORKSPACE_CONFIG")), ":4096:8");
  compat::set_deterministic_numerics(false);
  EXPECT_EQ(std::getenv("CUBLAS_WORKSPACE_CONFIG"), nullptr);
  compat::set_deterministic_numerics(true);  // the next check has it again
  EXPECT_NE(std::getenv("CUBLAS_WORKSPACE_CONFIG"), nullptr);
}

TEST_F(NumericsSettings, AUsersCublasWorkspaceStaysThroughCheckAndTiming) {
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8", 1);
  compat::set_deterministic_numerics(true);
  compat::set_deterministic_numerics(false);
  ASSERT_NE(std::getenv("CUBLAS_WORKSPACE_CONFIG"), nullptr);
  EXPECT_EQ(std::string(std::getenv("CUBLAS_WORKSPACE_CONFIG")), ":16:8");
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
}

// A timing on a CUDA device reports the variable where it is set; the CPU has no cuBLAS.
TEST_F(NumericsSettings, ATimingOnCudaReportsACublasWorkspaceConfigThatIsSet) {
  const c10::Device cuda(c10::kCUDA, 0), cpu(c10::kCPU);
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
  EXPECT_FALSE(compat::cublas_workspace_config_for_timing(cuda).has_value());
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8", 1);
  EXPECT_EQ(compat::cublas_workspace_config_for_timing(cuda).value_or(""), ":16:8");
  EXPECT_FALSE(compat::cublas_workspace_config_for_timing(cpu).has_value());
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
}

// A model whose TorchBench class turns cuDNN's benchmark mode on and its deterministic mode off
// (TorchVisionModel, TimmModel): upstream loads it after its determinism setup, so the model's
// switches win; the rest of the setup stands, and a switch the model does not set is untouched.
TEST_F(NumericsSettings, TheModelsOwnCudnnSwitchesComeAfterTheHarnesss) {
  compat::set_deterministic_numerics(true);
  compat::set_cudnn_switches(/*deterministic=*/false, /*benchmark=*/true);
  auto& context = at::globalContext();
  EXPECT_FALSE(context.deterministicCuDNN());
  EXPECT_TRUE(context.benchmarkCuDNN());
  EXPECT_TRUE(context.deterministicAlgorithms());
  EXPECT_FALSE(context.allowTF32CuDNN());

  compat::set_deterministic_numerics(false);
  compat::set_cudnn_switches(/*deterministic=*/true, std::nullopt);  // Super_SloMo's deterministic
  EXPECT_TRUE(context.deterministicCuDNN());
  EXPECT_FALSE(context.benchmarkCuDNN());
}

}  // namespace
}  // namespace zoobench
