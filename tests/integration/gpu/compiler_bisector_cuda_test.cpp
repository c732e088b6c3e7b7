// Inductor's compiler bisector finds a planted fault (bisect/compiler_bisector.h) through the real
// binary on CUDA: with tests/integration/planted_inductor_fault/ on PYTHONPATH and
// ZOOBENCH_TEST_PLANT_INDUCTOR_FAULT=relu_as_abs, every Python of the run lowers aten.relu as
// abs in Inductor (its sitecustomize.py), so make_zoo's MLP (Linear, ReLU, Linear) fails
// accuracy with inductor and passes with dynamo's eager and aot_eager stages. No switch is the
// fault, so the switch search ends at once (fails with every switch off too); the compiler
// bisector must name the stage inductor, the subsystem lowerings, and the relu node.
//
// About twenty checks, each a `zoobench run` child that compiles the model: minutes. scripts/
// gpu-check.sh's compiler-bisect stage runs this test alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "integration/integration_helpers.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;

bool cuda_available() {
  auto probe =
      zt::run_command(zt::python() + " -c 'import torch; print(torch.cuda.is_available())'");
  return probe.exit_code == 0 && probe.output.find("True") != std::string::npos;
}

bool has_compiler_bisector() {
  return zt::run_command(zt::python() + " -c 'import torch._inductor.compiler_bisector'")
             .exit_code == 0;
}

TEST(CompilerBisectorOnCuda, FindsAWrongLoweringOfRelu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device for " << zt::python();
  if (!listed_as_available("inductor")) GTEST_SKIP() << "inductor cannot run here";
  if (!has_compiler_bisector())
    GTEST_SKIP() << "this torch has no torch._inductor.compiler_bisector";
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("bisect");
  make_zoo(zoo, suites, "py", {{"mlp", "py_mlp"}});
  const char* python_path = std::getenv("PYTHONPATH");
  const std::string planted = std::string(ZOOBENCH_INTEGRATION_DIR) + "/planted_inductor_fault" +
                              (python_path && *python_path ? ":" + std::string(python_path) : "");
  auto run = zt::run_command(
      "ZOOBENCH_TEST_PLANT_INDUCTOR_FAULT=relu_as_abs PYTHONPATH=" + quote(planted) + " " +
      zoobench_command("bisect --suite py --only mlp --backend inductor --devices cuda "
                       "--timeout 240 --no-submodules --zoo " +
                       quote(zoo) + " --suites-dir " + quote(suites) + " --output-directory " +
                       quote(out)));
  std::cout << run.output;  // the report, for gpu-check's compiler-bisect stage log
  ASSERT_EQ(run.exit_code, 0);
  const auto record = nlohmann::json::parse(read_text(out + "/bisect.json"));
  // The plant took: inductor fails, whatever the switches.
  ASSERT_EQ(record["steps"][0]["status"], "fail_accuracy")
      << "the planted fault did not make inductor fail (see the step's log for the "
         "sitecustomize line):\n"
      << run.output;
  EXPECT_EQ(record["verdict"], "fails_without_optimization") << run.output;

  const auto& bisector = record["compiler_bisector"];
  ASSERT_EQ(bisector["status"], "found") << bisector.dump(2) << "\n" << run.output;
  EXPECT_EQ(bisector["backend"], "inductor");
  EXPECT_EQ(bisector["subsystem"], "lowerings");
  EXPECT_TRUE(bisector["bisect_number"].is_number_integer()) << bisector.dump(2);
  EXPECT_THAT(bisector["debug_info"].get<std::string>(), HasSubstr("relu"));
  EXPECT_EQ(bisector["config_change"], "");
  // Dynamo's stages before Inductor passed; Inductor with every lowering off passed.
  bool eager_passed = false, lowerings_off_passed = false;
  for (const auto& check : bisector["checks"]) {
    if (check["backend"] == "eager" && check["subsystem"] == "") {
      eager_passed = check["passed"].get<bool>();
      EXPECT_EQ(check["zoobench_backend"], "compile:eager");
    }
    if (check["subsystem"] == "lowerings" && check["run_state"] == "test_disable")
      lowerings_off_passed = check["passed"].get<bool>();
  }
  EXPECT_TRUE(eager_passed) << bisector.dump(2);
  EXPECT_TRUE(lowerings_off_passed) << bisector.dump(2);
  EXPECT_THAT(run.output,
              HasSubstr("first fails at backend inductor, subsystem lowerings, bisect number"));
  EXPECT_THAT(run.output, HasSubstr("relu"));
}

}  // namespace
