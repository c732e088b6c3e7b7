// The latency matrix: backends side by side per suite and context, the fastest marked among the
// backends whose accuracy did not fail, and zoobench's best against torch.compile's best, with
// the numbers worked out by hand.
#include "zoobench/report/latency_matrix.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report_rows.h"
#include "zoobench/report/joined_results.h"
#include "zoobench/report/markdown.h"

namespace zoobench::report {
namespace {

using testing::accuracy_row;
using testing::performance_row;

ResultRow timed(const std::string& model, const std::string& backend, const std::string& family,
                double ms, const std::string& suite = "timm_models") {
  return performance_row("cuda", model, backend, 10.0, ms,
                         {{"backend_family", family}, {"suite", suite}});
}

ResultRow checked(const std::string& model, const std::string& backend, const std::string& status,
                  const std::string& suite = "timm_models") {
  return accuracy_row("cuda", model, status, {{"backend", backend}, {"suite", suite}});
}

TEST(LatencyMatrix, BackendsSideBySideWithTheFastestAndTheRatioToTorchCompile) {
  std::vector<ResultRow> rows = {
      timed("resnet", "jit", "zoobench", 2.0),
      timed("resnet", "aot_inductor", "zoobench", 1.0),
      timed("resnet", "inductor", "torch.compile", 1.6),
      timed("resnet", "python_eager", "python", 4.0),
      timed("vit", "jit", "zoobench", 3.0),
      timed("vit", "aot_inductor", "zoobench", 0.5),
      timed("vit", "inductor", "torch.compile", 2.0),
      timed("vit", "python_eager", "python", 5.0),
      // aot_inductor is fastest on vit but fails accuracy there: it is neither fastest nor counted.
      checked("vit", "aot_inductor", "fail_accuracy"),
      checked("resnet", "aot_inductor", "pass"),
  };
  auto matrices = build_latency_matrices(rows);
  ASSERT_EQ(matrices.size(), 1u);
  const LatencyMatrix& m = matrices[0];
  EXPECT_EQ(m.title(), "timm_models \u00b7 cuda \u00b7 inference \u00b7 float32");
  // The uncompiled baseline first, then zoobench's backends, then torch.compile's.
  EXPECT_EQ(m.backends,
            (std::vector<std::string>{"python_eager", "jit", "aot_inductor", "inductor"}));
  ASSERT_EQ(m.rows.size(), 2u);
  const MatrixRow& resnet = m.rows[0];
  const MatrixRow& vit = m.rows[1];
  EXPECT_EQ(resnet.model, "resnet");
  EXPECT_EQ(resnet.fastest, 2u);  // aot_inductor, 1.0 ms
  EXPECT_EQ(vit.fastest, 3u);     // inductor, since aot_inductor failed accuracy
  EXPECT_TRUE(vit.cells[2].accuracy_failed());
  EXPECT_DOUBLE_EQ(*resnet.zoobench_vs_torch_compile, 1.0 / 1.6);
  EXPECT_DOUBLE_EQ(*vit.zoobench_vs_torch_compile,
                   3.0 / 2.0);  // jit: the best zoobench result that passed
  EXPECT_EQ(m.compared, 2);
  EXPECT_EQ(m.zoobench_at_or_below, 1);
  EXPECT_NEAR(*m.geomean_zoobench_vs_torch_compile, std::sqrt(1.0 / 1.6 * 1.5), 1e-12);
  // Per backend, latency over the best torch.compile latency of each model.
  EXPECT_NEAR(*m.geomean_vs_torch_compile[1], std::sqrt(2.0 / 1.6 * 3.0 / 2.0), 1e-12);  // jit
  EXPECT_NEAR(*m.geomean_vs_torch_compile[2], 1.0 / 1.6, 1e-12);  // aot_inductor: resnet only
  EXPECT_NEAR(*m.geomean_vs_torch_compile[3], 1.0, 1e-12);        // inductor against itself

  const std::string markdown = markdown_latency_matrices(join_results(rows));
  EXPECT_NE(markdown.find("| vit "), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("0.500 \u2717"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("**1.000**"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("at or below torch.compile's fastest on 1 of 2 models"),
            std::string::npos)
      << markdown;
}

TEST(LatencyMatrix, OneMatrixPerSuiteAndNoneForOneBackend) {
  std::vector<ResultRow> rows = {
      timed("resnet", "jit", "zoobench", 2.0, "timm_models"),
      timed("resnet", "inductor", "torch.compile", 1.0, "timm_models"),
      timed("bert", "jit", "zoobench", 5.0, "huggingface"),
      timed("bert", "inductor", "torch.compile", 4.0, "huggingface"),
      timed("alexnet", "jit", "zoobench", 1.0, "torchbench"),
  };
  auto matrices = build_latency_matrices(rows);
  ASSERT_EQ(matrices.size(), 2u);
  EXPECT_EQ(matrices[0].suite, "timm_models");
  EXPECT_EQ(matrices[1].suite, "huggingface");
  ASSERT_EQ(matrices[1].rows.size(), 1u);
  EXPECT_EQ(matrices[1].rows[0].model, "bert");
}

// With a worker per GPU, a model's backends ran on cuda:0 and cuda:1: still one matrix.
TEST(LatencyMatrix, WorkersOnSeveralGpusShareOneMatrix) {
  ResultRow on_second = timed("resnet", "inductor", "torch.compile", 1.0);
  on_second.cells["dev"] = "cuda:1";
  ResultRow on_first = timed("resnet", "jit", "zoobench", 2.0);
  on_first.cells["dev"] = "cuda:0";
  auto matrices = build_latency_matrices({on_first, on_second});
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_EQ(matrices[0].dev, "cuda");
  EXPECT_EQ(matrices[0].backends, (std::vector<std::string>{"jit", "inductor"}));
  EXPECT_DOUBLE_EQ(*matrices[0].rows[0].zoobench_vs_torch_compile, 2.0);
}

// A latency whose samples varied too much is marked in both reports, never shown clean.
TEST(LatencyMatrix, AnUnstableLatencyIsMarked) {
  ResultRow shaky = timed("resnet", "inductor", "torch.compile", 1.0);
  shaky.cells["unstable"] = "1";
  ResultRow steady = timed("resnet", "jit", "zoobench", 2.0);
  steady.cells["unstable"] = "0";
  const std::vector<ResultRow> rows = {steady, shaky};
  const auto matrices = build_latency_matrices(rows);
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_FALSE(matrices[0].rows[0].cells[0].unstable);
  EXPECT_TRUE(matrices[0].rows[0].cells[1].unstable);
  const std::string markdown = markdown_latency_matrices(join_results(rows));
  EXPECT_NE(markdown.find("**1.000**\u2020"), std::string::npos) << markdown;
  EXPECT_EQ(markdown.find("2.000\u2020"), std::string::npos) << markdown;
  EXPECT_NE(format_latency_matrix(rows).find("\u2020: unstable"), std::string::npos);
}

TEST(LatencyMatrix, FailedRunsShowTheirStatusAndNoComparisonWithoutTorchCompileResults) {
  ResultRow failed = timed("resnet", "inductor", "torch.compile", 1.0);
  failed.cells["status"] = "fail_to_run";
  failed.cells["abs_latency"] = "";
  std::vector<ResultRow> rows = {timed("resnet", "jit", "zoobench", 2.0), failed};
  auto matrices = build_latency_matrices(rows);
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_FALSE(matrices[0].compares_with_torch_compile());
  EXPECT_EQ(matrices[0].rows[0].cells[1].status, "fail_to_run");
  const std::string markdown = markdown_latency_matrices(join_results(rows));
  EXPECT_NE(markdown.find("fail_to_run"), std::string::npos) << markdown;
  EXPECT_EQ(markdown.find("zoobench/torch.compile"), std::string::npos) << markdown;
}

// Per eager: each latency over the eager reference timed in its own process (1 / speedup), so
// a process whose eager ran slow does not flatter its backend. jit: 2 ms against 8 ms eager
// (speedup 4); inductor: 1 ms against 2 ms eager (speedup 2): by latency zoobench is 2x slower,
// per eager 0.5x.
TEST(LatencyMatrix, PerEagerRatioUsesEachProcesssOwnEagerReference) {
  std::vector<ResultRow> rows = {
      testing::performance_row("cuda", "resnet", "jit", 8.0, 2.0,
                               {{"backend_family", "zoobench"}, {"suite", "timm_models"}}),
      testing::performance_row("cuda", "resnet", "inductor", 2.0, 1.0,
                               {{"backend_family", "torch.compile"}, {"suite", "timm_models"}}),
  };
  auto matrices = build_latency_matrices(rows);
  ASSERT_EQ(matrices.size(), 1u);
  const MatrixRow& resnet = matrices[0].rows[0];
  EXPECT_DOUBLE_EQ(*resnet.zoobench_vs_torch_compile, 2.0);
  EXPECT_DOUBLE_EQ(*resnet.zoobench_vs_torch_compile_per_eager, 0.5);
  EXPECT_DOUBLE_EQ(*matrices[0].geomean_zoobench_vs_torch_compile_per_eager, 0.5);
  const std::string markdown = markdown_latency_matrices(join_results(rows));
  EXPECT_NE(markdown.find("per eager"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("0.50x"), std::string::npos) << markdown;
}

// Kernels: the device kernel time of the two backends the latency ratio compares (each family's
// fastest by latency), not the family's least kernel time: on resnet aot_inductor (1.0 ms, 0.9
// ms of kernels) against reduce-overhead (1.2 ms, 0.9 ms), though inductor's kernels took 0.8
// ms: 1.0x, zoobench's lead is host time. vit's rows measured no kernel time: no ratio, and the
// geomean is resnet's alone.
TEST(LatencyMatrix, KernelRatioIsThatOfTheBackendsTheLatencyRatioCompares) {
  auto with_kernels = [](const std::string& model, const std::string& backend,
                         const std::string& family, double ms, const std::string& kernel_ms) {
    ResultRow row = timed(model, backend, family, ms);
    row.cells["compiled_op_ms"] = kernel_ms;
    return row;
  };
  std::vector<ResultRow> rows = {
      with_kernels("resnet", "aot_inductor", "zoobench", 1.0, "0.9"),
      with_kernels("resnet", "jit", "zoobench", 2.0, "0.7"),
      with_kernels("resnet", "inductor", "torch.compile", 1.5, "0.8"),
      with_kernels("resnet", "inductor:reduce-overhead", "torch.compile", 1.2, "0.9"),
      with_kernels("vit", "aot_inductor", "zoobench", 1.0, ""),
      with_kernels("vit", "jit", "zoobench", 2.0, ""),
      with_kernels("vit", "inductor", "torch.compile", 2.0, "1.5"),
      with_kernels("vit", "inductor:reduce-overhead", "torch.compile", 2.0, "1.5"),
  };
  auto matrices = build_latency_matrices(rows);
  ASSERT_EQ(matrices.size(), 1u);
  const LatencyMatrix& m = matrices[0];
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*m.rows[0].zoobench_vs_torch_compile, 1.0 / 1.2);
  EXPECT_DOUBLE_EQ(*m.rows[0].zoobench_vs_torch_compile_kernels, 1.0);
  EXPECT_FALSE(m.rows[1].zoobench_vs_torch_compile_kernels.has_value());
  EXPECT_DOUBLE_EQ(*m.geomean_zoobench_vs_torch_compile_kernels, 1.0);
  EXPECT_NE(m.comparison_sentence().find("kernel time 1.00x"), std::string::npos)
      << m.comparison_sentence();
  const std::string markdown = markdown_latency_matrices(join_results(rows));
  EXPECT_NE(markdown.find("| kernels |"), std::string::npos) << markdown;
}

// A model that a resumable run has not finished (reduce-overhead has no row yet) is not
// compared: its "best torch.compile" would be the best of the backends run so far.
TEST(LatencyMatrix, AModelMissingABackendsRowIsNotCompared) {
  std::vector<ResultRow> rows = {
      timed("resnet", "jit", "zoobench", 2.0),
      timed("resnet", "inductor", "torch.compile", 4.0),
      timed("resnet", "inductor:reduce-overhead", "torch.compile", 1.0),
      timed("vit", "jit", "zoobench", 2.0),
      timed("vit", "inductor", "torch.compile", 4.0),
  };
  auto matrices = build_latency_matrices(rows);
  ASSERT_EQ(matrices.size(), 1u);
  const LatencyMatrix& m = matrices[0];
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*m.rows[0].zoobench_vs_torch_compile, 2.0);
  EXPECT_FALSE(m.rows[1].zoobench_vs_torch_compile.has_value());
  EXPECT_EQ(m.compared, 1);
  EXPECT_EQ(m.incomplete, 1);
  EXPECT_NE(m.comparison_sentence().find("1 model not compared"), std::string::npos)
      << m.comparison_sentence();
}

}  // namespace
}  // namespace zoobench::report
