// End to end through files: tests/gpu/accuracy/generate_judged_cases.py (in its torch 1.13
// mode: torchvision model, TorchScript freezing for the compiler, a Python transcription of the
// rule as judge) writes torch.save files and verdicts; zoobench reads the files and must give
// every verdict. When the CLI is built, check_judged_cases.py runs `zoobench same` on them too.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/testing.h"
#include "zoobench/accuracy/compare.h"
#include "zoobench/serialization/torch_save.h"

namespace zoobench::accuracy {
namespace {

TEST(JudgedCases, SameAgreesOnEveryGeneratedCase) {
  testing::ScratchDir dir;
  const std::string scripts = testing::repo_root() + "/tests/gpu/accuracy";
  auto generated = testing::run_python(fmt::format(
      "import runpy, sys\n"
      "sys.argv = ['generate_judged_cases.py', '--out', '{}', '--judge', 'reimplementation',\n"
      "            '--device', 'cpu', '--models', 'mobilenet_v3_small',\n"
      "            '--compile-budget-s', '0']\n"
      "runpy.run_path('{}/generate_judged_cases.py', run_name='__main__')\n",
      dir.path(), scripts));
  ASSERT_EQ(generated.exit_code, 0) << generated.output;

  std::ifstream in(dir.file("cases.json"));
  ASSERT_TRUE(in) << "no cases.json: " << generated.output;
  nlohmann::json suite = nlohmann::json::parse(in);
  ASSERT_EQ(suite["format"], "zoobench-judged-cases/1");
  int same_count = 0, different = 0;
  for (const auto& c : suite["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    SameOptions o;
    o.tol = c["options"]["tol"];
    o.cos_similarity = c["options"]["cos_similarity"];
    o.equal_nan = c["options"]["equal_nan"];
    o.use_larger_multiplier_for_smaller_tensor =
        c["options"]["use_larger_multiplier_for_smaller_tensor"];
    o.use_iou_for_bool = c["options"]["use_iou_for_bool"];
    o.iou_threshold = c["options"]["iou_threshold"];
    auto load = [&](const char* role) {
      if (c[role].is_null()) return c10::IValue();
      return serialization::load_torch_save(dir.path() + "/" + c[role].get<std::string>());
    };
    const bool expected = c["expected"];
    SameResult result = same(load("ref"), load("res"), load("fp64"), o);
    EXPECT_EQ(result.pass, expected)
        << "worst " << result.summary.worst_path << " margin " << result.summary.worst_margin;
    (expected ? same_count : different)++;
  }
  EXPECT_GE(same_count, 40);
  EXPECT_GE(different, 8);

  const std::string cli = testing::binary_dir() + "/zoobench";
  if (std::filesystem::exists(cli)) {
    auto checked = testing::run_command(fmt::format(
        "python3 {}/check_judged_cases.py {} --zoobench {} -j 2 -k '{}'", scripts, dir.path(), cli,
        // A sample of every kind: each run of the CLI loads LibTorch anew.
        "compiled_fp32|noise_0.01|derived/(dict|masks|nan|python|small_8)|training"));
    EXPECT_EQ(checked.exit_code, 0) << checked.output;
    EXPECT_NE(checked.output.find("0 disagree, 0 errors"), std::string::npos) << checked.output;
  } else {
    std::cout << "note: " << cli << " is not built; `zoobench same` itself was not run\n";
  }
}

}  // namespace
}  // namespace zoobench::accuracy
