// The markdown report: the Ascend suite's table for a small hand-built run, matched as a whole
// string, plus the summary line, failures and the baseline sections.
#include "zoobench/report/markdown.h"

#include <gtest/gtest.h>

#include "report_rows.h"
#include "zoobench/report/baseline.h"

namespace zoobench::report {
namespace {

using testing::accuracy_row;
using testing::performance_row;

std::vector<ResultRow> small_run() {
  return {
      accuracy_row("cpu", "resnet18", "pass", {{"margin", "0.1"}}),
      accuracy_row("cpu", "vgg", "fail_accuracy", {{"reason", "output[0] differs | badly"}}),
      performance_row("cpu", "resnet18", "jit", 20, 10, {{"unstable", "1"}}),
      performance_row("cpu", "vgg", "jit", 5, 10),
  };
}

TEST(Markdown, AscendTableForASmallRun) {
  std::string expected =
      "| index | model_name | cpu_accuracy  | eager_E2E | jit_E2E | E2E_speed_up_rate | eager_OP | "
      "jit_OP | OP_speed_up_rate |\n"
      "| ----: | ---------- | ------------- | --------: | ------: | ----------------: | -------: | "
      "-----: | ---------------: |\n"
      "|     1 | resnet18   | pass          |     20.00 |   10.00 |            2.00x\u2020 |       "
      " - |      - |                - |\n"
      "|     2 | vgg        | fail_accuracy |     5.000 |   10.00 |            0.500x |        - | "
      "     - |                - |\n"
      "\n"
      "Summary: pass rate 50.0% (1/2) \u00b7 geomean E2E_speed_up_rate 1.00x\u2020 over 2 models "
      "vs "
      "TorchScript eager \u00b7 geomean OP_speed_up_rate -\n"
      "\n"
      "Speedups are eager / compiled, eager being eval.pt in the TorchScript interpreter "
      "(eager_reference torchscript).\n"
      "\n"
      "\u2020 unstable: the spread of the eager or compiled samples (1.4826 MAD / median) exceeded "
      "2.5%; the speedup may not reproduce.\n"
      "\n"
      "Failures:\n"
      "\n"
      "| model_name | where        | status        | reason                     |\n"
      "| ---------- | ------------ | ------------- | -------------------------- |\n"
      "| vgg        | cpu_accuracy | fail_accuracy | output[0] differs \\| badly |\n";
  EXPECT_EQ(format_ascend_table(small_run()), expected);
}

// Names and reasons come from files people exchange: in a viewer they stay text (no HTML, no
// links), and no terminal escape reaches a report.
TEST(Markdown, CellsCannotBecomeHtmlLinksOrTerminalEscapes) {
  const std::string table = markdown_table(
      {"model", "reason"},
      {{"<script>alert(1)</script>", "[x](javascript:alert(1)) \x1b[31mred\x1b[0m"},
       {"<img src=x onerror=alert(1)>", "a & b `code`"}});
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (std::string("<>&`").find(table[i]) != std::string::npos ||
        (table[i] == '(' && i > 0 && table[i - 1] == ']')) {
      EXPECT_TRUE(i > 0 && table[i - 1] == '\\') << "unescaped " << table[i] << " in\n" << table;
    }
  }
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_NE(table.find("\\<script\\>alert(1)\\</script\\>"), std::string::npos) << table;
  EXPECT_NE(table.find("a \\& b \\`code\\`"), std::string::npos) << table;
}

TEST(Markdown, TwoDevicesAndTwoBackends) {
  std::vector<ResultRow> rows = {
      accuracy_row("cuda", "m", "pass"),
      accuracy_row("npu", "m", "pass"),
      performance_row("cuda", "m", "jit", 9, 3, {{"eager_op_ms", "6"}, {"compiled_op_ms", "2"}}),
      performance_row("cuda", "m", "aot_inductor", 9, 2),
  };
  JoinedResults joined = join_results(rows);
  std::string table = markdown_results_table(joined);
  std::string header = table.substr(0, table.find('\n'));
  EXPECT_EQ(
      header,
      "| index | model_name | cuda_accuracy | npu_accuracy | eager_E2E | jit_E2E | "
      "jit_E2E_speed_up_rate | aot_inductor_E2E | aot_inductor_E2E_speed_up_rate | eager_OP | "
      "jit_OP | jit_OP_speed_up_rate | aot_inductor_OP | aot_inductor_OP_speed_up_rate |");
  EXPECT_NE(table.find(" 3.00x |"), std::string::npos) << table;
  EXPECT_NE(table.find(" 4.50x |"), std::string::npos) << table;
  std::string summary = markdown_summary_line(joined, summarize(joined));
  EXPECT_EQ(
      summary,
      "Summary: pass rate 100.0% (2/2; cuda 1/1, npu 1/1) \u00b7 geomean jit_E2E_speed_up_rate "
      "3.00x over 1 model vs TorchScript eager \u00b7 geomean jit_OP_speed_up_rate 3.00x over 1 "
      "model vs TorchScript eager \u00b7 geomean aot_inductor_E2E_speed_up_rate 4.50x over 1 model "
      "vs TorchScript eager \u00b7 geomean aot_inductor_OP_speed_up_rate -");
}

TEST(Markdown, DocumentHasSectionsAndBaselineRegressions) {
  std::vector<ResultRow> before = {
      accuracy_row("cpu", "resnet18", "pass"), accuracy_row("cpu", "vgg", "pass"),
      performance_row("cpu", "resnet18", "jit", 30, 10),  // 3x, now 2x: regression
      performance_row("cpu", "vgg", "jit", 5, 10.2),      // 0.49x, now 0.5x: no change
  };
  JoinedResults current = join_results(small_run());
  ReportOptions options;
  options.sources = {"run_accuracy.csv", "run_performance.csv"};
  options.baseline = compare_with_baseline(current, join_results(before));
  options.baseline_sources = {"old.csv"};
  std::string doc = render_markdown(current, options);
  EXPECT_EQ(
      doc.rfind("# zoobench report\n\n2 models \u00b7 devices: cpu \u00b7 mode: inference", 0), 0u)
      << doc;
  for (const char* section :
       {"## Summary", "## jit", "## Failures", "## Compared with baseline", "## Regressions"}) {
    EXPECT_NE(doc.find(section), std::string::npos) << section;
  }
  std::string regressions = doc.substr(doc.find("## Regressions"));
  EXPECT_NE(regressions.find("- **resnet18**: jit E2E speedup vs TorchScript eager 3.00x \u2192 "
                             "2.00x (33.3% slower)"),
            std::string::npos)
      << regressions;
  EXPECT_NE(regressions.find("- **vgg**: cpu_accuracy pass \u2192 fail_accuracy"),
            std::string::npos)
      << regressions;
  EXPECT_EQ(options.baseline->regressions(), 2);
}

std::size_t display_width(const std::string& line) {
  std::size_t width = 0;
  for (unsigned char c : line) width += (c & 0xC0) != 0x80 ? 1 : 0;
  return width;
}

// The document leads with the summary, then gives each backend one compact table (the wide
// Ascend table, 14 columns with two backends, stays in the CSV and the HTML report); no table is
// wider than 160 characters for a demo-sized run, and the HTML report (its chart) is linked.
TEST(Markdown, SummaryFirstThenOneCompactTablePerBackend) {
  std::vector<ResultRow> rows;
  for (const std::string name : {"densenet121", "mobilenet_v3_large", "shufflenet_v2_x1_0",
                                 "squeezenet1_1", "text_encoder_small", "resnet18"}) {
    for (const std::string backend : {"jit", "python_eager"}) {
      rows.push_back(accuracy_row("cpu", name, "pass", {{"backend", backend}}));
      rows.push_back(performance_row("cpu", name, backend, 290.5, 27.25,
                                     {{"speedup_ci_low", "10.1"},
                                      {"speedup_ci_high", "11.2"},
                                      {"unstable", backend == "jit" ? "1" : "0"}}));
    }
  }
  ReportOptions options;
  options.sources = {"results/demo/demo_jit_inference_float32_cpu_accuracy.csv",
                     "results/demo/demo_jit_inference_float32_cpu_performance.csv"};
  options.html_link = "report.html";
  const std::string doc = render_markdown(join_results(rows), options);
  const auto summary = doc.find("## Summary"), jit = doc.find("## jit"),
             python_eager = doc.find("## python_eager");
  ASSERT_NE(summary, std::string::npos) << doc;
  ASSERT_NE(jit, std::string::npos) << doc;
  ASSERT_NE(python_eager, std::string::npos) << doc;
  EXPECT_LT(summary, doc.find("## Latency matrix")) << doc;
  EXPECT_LT(doc.find("## Latency matrix"), jit) << doc;
  EXPECT_EQ(doc.find("speed_up_rate |"), std::string::npos) << "the wide table:\n" << doc;
  EXPECT_NE(doc.find("pass rate 100.0% (12/12"), std::string::npos) << doc;
  EXPECT_NE(doc.find("6 of 12 timed rows are unstable"), std::string::npos) << doc;
  EXPECT_NE(doc.find("[report.html](report.html)"), std::string::npos) << doc;
  const std::string jit_table = doc.substr(jit, python_eager - jit);
  // 10.66x in [10.1, 11.2], ±5.2%: two significant digits, and the interval's ends as many
  // decimals; the column says what eager the speedup is against.
  EXPECT_NE(jit_table.find("| speedup vs TorchScript eager |"), std::string::npos) << jit_table;
  EXPECT_NE(jit_table.find("| densenet121        | pass     |    290.5 | 27.25 | "
                           "                        11x\u2020 |    10x \u2013 11x |"),
            std::string::npos)
      << jit_table;
  // The summary's geomean carries its band and the unstable mark of the jit rows.
  EXPECT_NE(doc.find("| jit          |        11x\u2020 [10x, 11x] | TorchScript eager |"),
            std::string::npos)
      << doc;
  std::size_t start = 0;
  while (start < doc.size()) {
    const std::size_t end = std::min(doc.find('\n', start), doc.size());
    const std::string line = doc.substr(start, end - start);
    if (line.rfind("|", 0) == 0) {
      EXPECT_LE(display_width(line), 160u) << line;
    }
    start = end + 1;
  }
}

TEST(Baseline, SlowerWithinConfidenceIntervalsIsNotARegression) {
  auto run = [](double speedup_ms, const char* low, const char* high) {
    return join_results({performance_row("cuda", "m", "jit", 10, speedup_ms,
                                         {{"speedup_ci_low", low}, {"speedup_ci_high", high}})});
  };
  // 2.0x -> 1.8x (10% slower) but the intervals [1.7, 2.3] and [1.6, 1.95] overlap.
  BaselineComparison noisy =
      compare_with_baseline(run(10 / 1.8, "1.6", "1.95"), run(5, "1.7", "2.3"));
  ASSERT_TRUE(noisy.models[0].e2e[0]);
  EXPECT_NEAR(*noisy.models[0].e2e[0]->ratio, 0.9, 1e-9);
  EXPECT_FALSE(noisy.models[0].regressed());
  // Same drop with tight intervals that do not overlap.
  BaselineComparison real =
      compare_with_baseline(run(10 / 1.8, "1.75", "1.85"), run(5, "1.95", "2.05"));
  EXPECT_TRUE(real.models[0].regressed());
  // 3% slower: under the 5% threshold.
  BaselineComparison small = compare_with_baseline(run(10 / 1.94, "", ""), run(5, "", ""));
  EXPECT_FALSE(small.models[0].regressed());
}

TEST(Baseline, PerformanceRunThatNowFailsIsARegression) {
  JoinedResults before = join_results({performance_row("cuda", "m", "jit", 10, 5)});
  JoinedResults now = join_results(
      {performance_row("cuda", "m", "jit", 10, 5, {{"status", "crash"}, {"speedup", "0"}})});
  BaselineComparison comparison = compare_with_baseline(now, before);
  ASSERT_TRUE(comparison.models[0].e2e[0]);
  EXPECT_TRUE(comparison.models[0].e2e[0]->regressed);
  EXPECT_NE(comparison.models[0].e2e[0]->why.find("crash"), std::string::npos);
  EXPECT_FALSE(comparison.models[0].op[0]);  // reported once
}

// The threshold behind the unstable mark travels with the rows (unstable_cov): the footnote says
// the one the rows used, and 2.5% for rows from before the column.
// Not only the cells: the summary lines under the table and the document's lines (pass rates by
// column, geomeans by series, the eager reference, the run's description) carry backends,
// devices and references read from the rows, and a row's `<img onerror=...>` reached them raw.
TEST(Markdown, SummaryLinesCannotBecomeHtml) {
  const std::string hostile = "<img src=x onerror=alert(1)>";
  const std::vector<ResultRow> rows = {
      accuracy_row("cpu", "a", "pass", {{"backend", hostile}}),
      performance_row("cpu", "a", hostile, 20, 10,
                      {{"eager_reference", hostile}, {"unstable", "1"}, {"dev", hostile}}),
  };
  for (const std::string& text :
       {format_ascend_table(rows), render_markdown(join_results(rows), ReportOptions{})}) {
    for (std::size_t at = text.find('<'); at != std::string::npos; at = text.find('<', at + 1))
      EXPECT_TRUE(at > 0 && text[at - 1] == '\\') << "raw < at " << at << " in\n" << text;
    EXPECT_NE(text.find("\\<img"), std::string::npos) << text;
  }
}

TEST(Markdown, UnstableFootnoteSaysTheThresholdTheRowsUsed) {
  std::vector<ResultRow> rows = {performance_row("cpu", "resnet18", "jit", 20, 10, {{"unstable", "1"}, {"unstable_cov", "0.05"}})};
  EXPECT_NE(format_ascend_table(rows).find("exceeded 5.0%;"), std::string::npos) << format_ascend_table(rows);
  rows = {performance_row("cpu", "resnet18", "jit", 20, 10, {{"unstable", "1"}})};
  EXPECT_NE(format_ascend_table(rows).find("exceeded 2.5%;"), std::string::npos) << format_ascend_table(rows);
}

// Every speedup says what eager it is against: the rows' eager_reference (python: the model's
// Python module; torchscript: eval.pt in the TorchScript interpreter); upstream's rows time the
// Python module.
TEST(Markdown, EverySpeedupSaysItsEagerReference) {
  const std::vector<ResultRow> rows = {
      performance_row("cpu", "m", "jit", 9, 3),
      performance_row("cpu", "m", "inductor", 9, 3, {{"eager_reference", "python"}}),
      performance_row("cpu", "n", "inductor", 9, 3, {{"eager_reference", "python"}}),
  };
  const std::string doc = render_markdown(join_results(rows));
  EXPECT_NE(doc.find("## jit\n\n| model | eager ms |    ms | speedup vs TorchScript eager |"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find("## inductor\n\n| model | eager ms |    ms | speedup vs Python eager |"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find("| inductor |                  3.00x | Python eager      |"),
            std::string::npos)
      << doc;
  EXPECT_NE(format_ascend_table(rows).find(
                "Speedups are eager / compiled: jit against eval.pt in the TorchScript "
                "interpreter; inductor against the model's Python module.\n"),
            std::string::npos)
      << format_ascend_table(rows);

  ResultRow upstream;
  upstream.kind = ExperimentKind::kPerformance;
  upstream.cells = {
      {"dev", "cpu"}, {"name", "m"}, {"batch_size", "4"}, {"speedup", "1.5"}, {"abs_latency", "2"}};
  EXPECT_NE(render_markdown(join_results({upstream}))
                .find("## compiled\n\n| model | eager ms |    ms | speedup vs Python eager |"),
            std::string::npos)
      << render_markdown(join_results({upstream}));

  // One series whose rows differ says so; rows from before the column say they do not know.
  const JoinedResults mixed =
      join_results({performance_row("cpu", "m", "jit", 9, 3),
                    performance_row("cpu", "n", "jit", 9, 3, {{"eager_reference", "python"}})});
  EXPECT_EQ(mixed.performance_series.at(0).eager_reference, kMixedEagerReferences);
  EXPECT_NE(markdown_backend_tables(mixed).find("speedup vs mixed eager references"),
            std::string::npos);
  const std::vector<ResultRow> old = {
      performance_row("cpu", "m", "jit", 9, 3, {{"eager_reference", ""}})};
  EXPECT_NE(format_ascend_table(old).find("Speedups are eager / compiled; the rows do not say "
                                          "which eager"),
            std::string::npos)
      << format_ascend_table(old);
}

// The geomean in the run-end table's summary line carries its band and the unstable mark.
TEST(Markdown, TheSummaryLinesGeomeanCarriesItsBandAndMark) {
  const std::vector<ResultRow> rows = {
      performance_row("cpu", "a", "jit", 20, 10,
                      {{"speedup_ci_low", "1.4"}, {"speedup_ci_high", "2.6"}, {"unstable", "1"}}),
      performance_row("cpu", "b", "jit", 80, 10,
                      {{"speedup_ci_low", "7.9"}, {"speedup_ci_high", "8.1"}}),
  };
  // sqrt(2 * 8) = 4 in [sqrt(1.4 * 7.9), sqrt(2.6 * 8.1)] = [3.33, 4.59]: ±16%, two digits.
  EXPECT_NE(format_ascend_table(rows).find("geomean E2E_speed_up_rate 4.0x\u2020 [3.3x, 4.6x] over "
                                           "2 models vs TorchScript eager"),
            std::string::npos)
      << format_ascend_table(rows);
}

}  // namespace
}  // namespace zoobench::report
