// Upstream's accuracy batch sizes, against upstream's own: read from the TorchBench checkout's
// benchmarks/dynamo/common.py (../shared/torchbench; skipped, saying so, without it), and the
// passes a run splits into.
#include "zoobench/runner/accuracy_batch.h"
#include "zoobench/runner/job_plan.h"
#include "zoobench/runner/model_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "testing/testing.h"

namespace zoobench {
namespace {

// Upstream's harness in the TorchBench checkout beside the repository (CI has it; a fresh clone
// may not).
std::filesystem::path upstream_common_py() {
  return std::filesystem::path(zoobench::testing::repo_root()) / ".." / "shared" / "torchbench" /
         "userbenchmark" / "dynamo" / "dynamobench" / "common.py";
}

// common.py's `if args.accuracy:` branch, past its batch-invariant sizes: each suite's
// `args.batch_size = N` when --batch-size is not given.
std::map<std::string, int64_t> upstream_sizes(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const auto from = source.find("args.batch_size = 16", source.find("if args.accuracy:"));
  const auto to = source.find("# Remove sources of randomness", from);
  if (from == std::string::npos || to == std::string::npos) return {};
  const std::string branch = source.substr(from, to - from);
  std::map<std::string, int64_t> sizes;
  const std::regex named(R"re(suite_name == "(\w+)":\s*args\.batch_size = (\d+))re");
  for (std::sregex_iterator it(branch.begin(), branch.end(), named), end; it != end; ++it)
    sizes[(*it)[1]] = std::stoll((*it)[2]);
  std::smatch timm;
  if (std::regex_search(branch, timm, std::regex(R"re('timm_models'[\s\S]*?args\.batch_size = (\d+))re")))
    sizes["timm_models"] = std::stoll(timm[1]);
  return sizes;
}

TEST(AccuracyBatch, UpstreamsSizesPerSuite) {
  EXPECT_EQ(upstream_accuracy_batch_size("demo"), std::nullopt);
  const std::filesystem::path path = upstream_common_py();
  if (!std::filesystem::is_regular_file(path))
    GTEST_SKIP() << "no TorchBench checkout at " << path.string()
                 << " (../shared/torchbench beside the repository): upstream's accuracy batch "
                    "sizes cannot be read to compare";
  const auto sizes = upstream_sizes(path);
  ASSERT_EQ(sizes.size(), 3u) << "common.py's accuracy batch sizes were not found in " << path;
  for (const auto& [suite, size] : sizes) {
    SCOPED_TRACE(suite);
    EXPECT_EQ(upstream_accuracy_batch_size(suite), size);
  }
}

RunOptions run_options(const std::string& suite, bool accuracy, bool performance) {
  RunOptions o;
  o.suite = suite;
  o.accuracy = accuracy;
  o.performance = performance;
  o.zoo_dir = "zoo";
  return o;
}

TEST(AccuracyBatch, AccuracyAtUpstreamsSizePerformanceAtTheLists) {
  const auto passes = upstream_passes(run_options("timm_models", true, true));
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_TRUE(passes[0].accuracy);
  EXPECT_FALSE(passes[0].performance);
  EXPECT_EQ(passes[0].batch_size, 8);
  EXPECT_EQ(passes[0].zoo_dir, "zoo/batch-8");
  EXPECT_FALSE(passes[1].accuracy);
  EXPECT_TRUE(passes[1].performance);
  EXPECT_EQ(passes[1].batch_size, std::nullopt);
  EXPECT_EQ(passes[1].zoo_dir, "zoo");
  // The accuracy pass's exports are at upstream's accuracy size, which the yaml's
  // accuracy.max_batch_size caps per model (the exporter's --accuracy-batch); the performance
  // pass's are not.
  EXPECT_TRUE(passes[0].accuracy_batch);
  EXPECT_FALSE(passes[1].accuracy_batch);
  EXPECT_THAT(exporter_arguments(export_request(passes[0], "suites"), "timm_models", "m"),
              ::testing::IsSupersetOf({"--batch-size", "8", "--accuracy-batch"}));
  EXPECT_THAT(exporter_arguments(export_request(passes[1], "suites"), "timm_models", "m"),
              ::testing::Not(::testing::Contains("--accuracy-batch")));

  auto named = run_options("timm_models", true, true);
  named.output = "out/rows.csv";
  const auto named_passes = upstream_passes(named);
  EXPECT_EQ(named_passes[0].output, "out/rows_accuracy.csv");
  EXPECT_EQ(named_passes[1].output, "out/rows_performance.csv");

  const auto accuracy_only = upstream_passes(run_options("huggingface", true, false));
  ASSERT_EQ(accuracy_only.size(), 1u);
  EXPECT_EQ(accuracy_only[0].batch_size, 1);
}

TEST(AccuracyBatch, AChosenBatchSizeAnotherSuiteNoExportOrAChildRunAsAsked) {
  auto chosen = run_options("torchbench", true, true);
  chosen.batch_size = 16;
  EXPECT_EQ(upstream_passes(chosen).size(), 1u);
  EXPECT_EQ(upstream_passes(chosen)[0].batch_size, 16);
  EXPECT_EQ(upstream_passes(run_options("demo", true, true)).size(), 1u);
  EXPECT_EQ(upstream_passes(run_options("torchbench", false, true))[0].batch_size, std::nullopt);
  auto no_export = run_options("torchbench", true, false);
  no_export.export_missing = false;
  EXPECT_EQ(upstream_passes(no_export)[0].batch_size, std::nullopt);
  auto child = run_options("torchbench", true, false);
  child.row_out = "rows.json";
  EXPECT_EQ(upstream_passes(child)[0].batch_size, std::nullopt);
}

// With torch.compile backends alone each model's process exports its own recipes: one pass,
// each model checked at upstream's size and then timed at the list's by one process, told so on
// its command line. A TorchScript backend in the run, --in-process or --accuracy-workers keep
// the two passes.
TEST(AccuracyBatch, TorchCompileBackendsCheckAndTimeEachModelInOneProcess) {
  auto compiled = run_options("torchbench", true, true);
  compiled.backends = {"inductor"};
  compiled.backend = "inductor";
  compiled.devices = {"cuda"};
  const auto one = upstream_passes(compiled);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_TRUE(one[0].accuracy && one[0].performance);
  EXPECT_EQ(one[0].accuracy_batch_here, 4);
  EXPECT_EQ(one[0].batch_size, std::nullopt);
  EXPECT_EQ(one[0].zoo_dir, "zoo");
  // The child's check: accuracy alone at that size from its own zoo folder.
  const RunOptions check = accuracy_pass(one[0], 4);
  EXPECT_FALSE(check.performance);
  EXPECT_EQ(check.batch_size, 4);
  EXPECT_TRUE(check.accuracy_batch);
  EXPECT_EQ(check.accuracy_batch_here, 0);
  EXPECT_EQ(check.zoo_dir, "zoo/batch-4");
  const JobPlan job = plan_job(one[0], ZooEntry{"torchbench", "m", "zoo/torchbench/m/manifest.json"},
                               SuiteConfig(), "inductor", true, true);
  const auto child = child_arguments(job, "cuda", "rows.json", "m.log", "");
  const auto flag = std::find(child.begin(), child.end(), "--accuracy-batch-here");
  ASSERT_NE(flag, child.end());
  EXPECT_EQ(*(flag + 1), "4");
  // Timings alone left (--resume): no check to run at another size.
  const JobPlan timing = plan_job(one[0], job.entry, SuiteConfig(), "inductor", false, true);
  const auto timing_child = child_arguments(timing, "cuda", "rows.json", "m.log", "");
  EXPECT_EQ(std::count(timing_child.begin(), timing_child.end(), "--accuracy-batch-here"), 0);

  auto traced = compiled;
  traced.backends = {"jit", "inductor"};
  EXPECT_EQ(upstream_passes(traced).size(), 2u);
  auto here = compiled;
  here.in_process = true;
  EXPECT_EQ(upstream_passes(here).size(), 2u);
  auto shared_checks = compiled;
  shared_checks.accuracy_workers = 3;
  EXPECT_EQ(upstream_passes(shared_checks).size(), 2u);
  auto check_only = compiled;
  check_only.performance = false;
  ASSERT_EQ(upstream_passes(check_only).size(), 1u);
  EXPECT_EQ(upstream_passes(check_only)[0].batch_size, 4);
  EXPECT_EQ(upstream_passes(check_only)[0].accuracy_batch_here, 0);
}

// One --time-budget for the run: the performance pass gets what the accuracy pass left, and
// none when it left nothing (it used to get the whole budget again).
TEST(AccuracyBatch, ThePassesShareOneTimeBudget) {
  EXPECT_EQ(pass_time_budget(600, 0), 600.0);
  EXPECT_EQ(pass_time_budget(600, 450), 150.0);
  EXPECT_EQ(pass_time_budget(600, 600), std::nullopt);
  EXPECT_EQ(pass_time_budget(600, 900), std::nullopt);
  EXPECT_EQ(pass_time_budget(0, 900), 0.0) << "no budget: every pass runs in full";
}

}  // namespace
}  // namespace zoobench
