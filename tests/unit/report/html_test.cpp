// The HTML report: self-contained, every result text escaped, the DOM hooks the browser test
// and other tools rely on (bars per model and metric, status cells, sort keys).
#include "zoobench/report/html.h"

#include <gtest/gtest.h>

#include <regex>

#include "report_rows.h"
#include "zoobench/report/baseline.h"
#include "zoobench/report/html_escape.h"
#include "zoobench/report/svg_chart.h"

namespace zoobench::report {
namespace {

using testing::accuracy_row;
using testing::performance_row;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

TEST(HtmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(escape_html("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;");
  EXPECT_EQ(escape_html("resnet18"), "resnet18");
  EXPECT_EQ(css_token("eager_1st_run_OOM"), "eager_1st_run_OOM");
  EXPECT_EQ(css_token("a b\"<"), "a_b__");
}

TEST(Html, EscapesModelNamesAndReasons) {
  std::string evil = "<img src=x onerror=alert(1)>";
  JoinedResults joined = join_results({
      accuracy_row("cuda", evil, "fail_to_run", {{"reason", "expected <Tensor> & got \"None\""}}),
      performance_row("cuda", evil, "jit", 2, 1),
  });
  std::string html = render_html(joined);
  EXPECT_EQ(html.find(evil), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(html.find("expected &lt;Tensor&gt; &amp; got &quot;None&quot;"), std::string::npos);
  // The only script is ours.
  EXPECT_EQ(count(html, "<script"), 1u);
}

TEST(Html, SelfContained) {
  JoinedResults joined =
      join_results({accuracy_row("cpu", "m", "pass"), performance_row("cpu", "m", "jit", 2, 1)});
  std::string html = render_html(joined);
  // No fetched resources: no links, no src attributes, no URLs other than the SVG namespace.
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  std::string without_namespace =
      std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  EXPECT_EQ(without_namespace.find("http"), std::string::npos);
  EXPECT_EQ(without_namespace.find("//cdn"), std::string::npos);
}

TEST(Html, HooksForEveryModelMetricAndDevice) {
  JoinedResults joined = join_results({
      accuracy_row("cuda", "a", "pass", {{"margin", "0.02"}}),
      accuracy_row("npu", "a", "fail_accuracy", {{"margin", "3.5"}}),
      accuracy_row("cuda", "b", "pass"),
      accuracy_row("npu", "b", "OOM"),
      accuracy_row("cuda", "c", "timeout"),
      performance_row("cuda", "a", "jit", 10, 4,
                      {{"eager_op_ms", "8"},
                       {"compiled_op_ms", "4"},
                       {"speedup_ci_low", "2.3"},
                       {"speedup_ci_high", "2.7"}}),
      performance_row("cuda", "b", "jit", 10, 8,
                      {{"eager_op_ms", "6"}, {"compiled_op_ms", "5"}, {"unstable", "1"}}),
      performance_row("cuda", "c", "jit", 10, 8, {{"status", "timeout"}, {"speedup", "0"}}),
  });
  std::string html = render_html(joined);
  EXPECT_EQ(count(html, "class=\"bar e2e"), 2u);  // c failed: no bar, its status instead
  EXPECT_EQ(count(html, "class=\"bar op"), 2u);
  EXPECT_EQ(count(html, "class=\"bar e2e\" data-model=\"a\""), 1u);
  EXPECT_EQ(count(html, "class=\"bar e2e unstable\" data-model=\"b\""), 1u);
  EXPECT_EQ(count(html, "<g class=\"ci\""), 1u);  // only a has an interval
  EXPECT_EQ(count(html, "class=\"reference\""), 1u);
  EXPECT_NE(html.find("class=\"failed\""), std::string::npos);
  // Status cells in the models table: a and b on both devices, c on cuda.
  EXPECT_EQ(count(html, "<td class=\"status status-pass\" data-status=\"pass\""), 2u);
  EXPECT_EQ(count(html, "<td class=\"status status-fail_accuracy\" data-status=\"fail_accuracy\""),
            2u);  // table + failures
  EXPECT_NE(html.find("data-status=\"OOM\""), std::string::npos);
  EXPECT_EQ(count(html, "<tr data-model="),
            3u + 4u);  // models + failures (a npu, b npu, c cuda, c perf)
  EXPECT_NE(html.find("<th data-key=\"E2E_speed_up_rate\""), std::string::npos);
  EXPECT_NE(html.find("<th data-key=\"cuda_accuracy\""), std::string::npos);
  EXPECT_EQ(count(html, "class=\"margin-bar\""), 2u);
}

TEST(Html, BaselineColumnMarksRegressions) {
  JoinedResults before = join_results(
      {performance_row("cuda", "a", "jit", 9, 3), performance_row("cuda", "b", "jit", 4, 2)});
  JoinedResults now = join_results(
      {performance_row("cuda", "a", "jit", 9, 6), performance_row("cuda", "b", "jit", 4, 2)});
  ReportOptions options;
  options.baseline = compare_with_baseline(now, before);
  std::string html = render_html(now, options);
  EXPECT_NE(html.find("<th data-key=\"jit_E2E_vs_baseline\""), std::string::npos);
  EXPECT_EQ(count(html, "<tr data-model=\"a\" class=\"regressed\">"), 1u);
  EXPECT_EQ(count(html, "<tr data-model=\"b\">"), 1u);
  EXPECT_NE(html.find("<td class=\"num regressed\" data-sort=\"0.5\""), std::string::npos);
  EXPECT_NE(html.find("<li data-model=\"a\">"), std::string::npos);
}

TEST(SvgChart, NiceTickSteps) {
  EXPECT_DOUBLE_EQ(nice_tick_step(2.0), 0.25);
  EXPECT_DOUBLE_EQ(nice_tick_step(3.5), 0.5);
  EXPECT_DOUBLE_EQ(nice_tick_step(1.05), 0.2);
  EXPECT_DOUBLE_EQ(nice_tick_step(12), 2.0);
}

TEST(SvgChart, BarsAreProportionalToSpeedup) {
  std::string svg = speedup_chart_svg(
      {{"a", SpeedupBar{2.0}, std::nullopt, ""}, {"b", SpeedupBar{1.0}, std::nullopt, ""}}, "jit");
  std::smatch match;
  std::vector<double> widths;
  std::regex width_re("class=\"bar e2e\"[^>]*width=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), width_re);
       it != std::sregex_iterator(); ++it) {
    widths.push_back(std::stod((*it)[1]));
  }
  ASSERT_EQ(widths.size(), 2u);
  EXPECT_NEAR(widths[0] / widths[1], 2.0, 0.01);
}

// A card with no number in any series (kernel time on a CPU run) is left out, not shown as "-".
TEST(Html, NoCardWithoutANumber) {
  JoinedResults cpu =
      join_results({accuracy_row("cpu", "m", "pass"), performance_row("cpu", "m", "jit", 2, 1)});
  std::string html = render_html(cpu);
  EXPECT_NE(html.find("Geomean E2E speedup"), std::string::npos);
  EXPECT_EQ(html.find("Geomean OP speedup"), std::string::npos) << "an empty kernel-time card";
  JoinedResults kernels = join_results({performance_row(
      "cuda", "m", "jit", 2, 1, {{"eager_op_ms", "1.5"}, {"compiled_op_ms", "0.5"}})});
  EXPECT_NE(render_html(kernels).find("Geomean OP speedup"), std::string::npos);
}

// The headline card carries the geomean's band and the unstable mark when a model in it is
// unstable; every speedup column and chart says what eager it is against.
TEST(Html, TheHeadlineCardCarriesItsBandAndEverySpeedupItsBaseline) {
  JoinedResults joined = join_results({
      performance_row("cpu", "a", "inductor", 20, 10,
                      {{"speedup_ci_low", "1.4"},
                       {"speedup_ci_high", "2.6"},
                       {"unstable", "1"},
                       {"eager_reference", "python"}}),
      performance_row(
          "cpu", "b", "inductor", 80, 10,
          {{"speedup_ci_low", "7.9"}, {"speedup_ci_high", "8.1"}, {"eager_reference", "python"}}),
  });
  const std::string html = render_html(joined);
  const auto card = html.find("<div class=\"label\">Geomean E2E speedup</div>");
  ASSERT_NE(card, std::string::npos) << html;
  const std::string value = html.substr(card, html.find("</div></div>", card) - card);
  EXPECT_NE(value.find("4.0\u00d7<span class=\"mark\""), std::string::npos) << value;
  EXPECT_NE(value.find("<span class=\"ci\">band 3.3\u00d7\u20134.6\u00d7</span>"),
            std::string::npos)
      << value;
  EXPECT_NE(html.find("inductor over 2 models vs Python eager"), std::string::npos) << html;
  EXPECT_NE(html.find("<th data-key=\"E2E_speed_up_rate\" class=\"num\">E2E_<wbr>speed_<wbr>up_"
                      "<wbr>rate<span class=\"ci\">vs Python eager</span></th>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("sorted by E2E speedup vs Python eager</figcaption>"), std::string::npos);
  // a: 2.0x in [1.4, 2.6], ±30%: two digits, the interval with as many decimals.
  EXPECT_NE(html.find(">2.0\u00d7<span class=\"mark\""), std::string::npos) << html;
  EXPECT_NE(html.find("<span class=\"ci\">1.4\u20132.6</span>"), std::string::npos) << html;
  EXPECT_NE(html.find(escape_html(kGeomeanBandNote)), std::string::npos);
}

}  // namespace
}  // namespace zoobench::report
