// The HTML report in headless Chromium: the DOM after the inline script ran has one bar per model
// and metric, a coloured status cell per model and device, escaped text, and a table sorted by the
// column named in the URL; a screenshot of the report goes to <build>/browser/report.png.
// Without Chromium the program prints why and exits 77, which ctest reports as skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>

#include "testing/testing.h"
#include "zoobench/report/baseline.h"
#include "zoobench/report/html.h"
#include "zoobench/util/files.h"

namespace zoobench::report {
namespace {

namespace fs = std::filesystem;
constexpr int kSkip = 77;

std::string find_chromium() {
  if (const char* given = std::getenv("ZOOBENCH_CHROMIUM")) return given;
  for (const char* name :
       {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    auto found = zoobench::testing::run_command(std::string("command -v ") + name);
    if (found.exit_code == 0 && !found.output.empty())
      return found.output.substr(0, found.output.find('\n'));
  }
  return "";
}

// A model of the hand-built run: accuracy on two devices, performance on cuda.
struct Model {
  std::string name, cuda, npu;  // statuses ("" = no row)
  double margin;
  double eager_ms, compiled_ms;  // 0 = no performance row
  double eager_op_ms, compiled_op_ms;
  std::string perf_status = "pass";
  bool unstable = false;
  std::string reason;
};

const std::vector<Model>& models() {
  static const std::vector<Model> kModels = {
      {"resnet50", "pass", "pass", 0.012, 7.9, 4.1, 6.8, 3.9},
      {"mobilenetv3_large_100", "pass", "pass", 0.031, 3.2, 1.1, 1.9, 0.95},
      {"vit_base_patch16_224", "pass", "fail_accuracy", 0.42, 12.4, 9.8, 11.6, 9.1, "pass", false,
       "npu: output[0] max_abs 3.1e-2 > tol 1e-2 <script>alert(1)</script>"},
      {"convnext_tiny", "pass", "pass", 0.2, 6.1, 6.4, 5.2, 5.0, "pass", true},
      {"BertForMaskedLM", "pass", "pass", 0.0007, 21.0, 14.2, 18.4, 13.1},
      {"densenet121", "fail_accuracy", "pass", 2.7, 9.3, 5.2, 6.0, 4.4, "pass", false,
       "output[0] differs: max_abs 0.08 (tol 0.01)"},
      {"hf_T5_generate", "timeout", "timeout", 0, 1, 1, 0, 0, "timeout", false,
       "killed after 1800 s"},
      {"swin_tiny_patch4", "pass", "", 0.05, 0, 0, 0, 0},
  };
  return kModels;
}

std::vector<ResultRow> rows(double slowdown_of_resnet50) {
  std::vector<ResultRow> out;
  for (const auto& model : models()) {
    for (const auto& [dev, status] : {std::pair{"cuda", model.cuda}, std::pair{"npu", model.npu}}) {
      if (status.empty()) continue;
      ResultRow row;
      row.kind = ExperimentKind::kAccuracy;
      row.cells = {{"dev", dev},       {"name", model.name}, {"accuracy", status},
                   {"backend", "jit"}, {"mode", "training"}, {"dtype", "float32"}};
      if (model.margin > 0)
        row.cells["margin"] = format_cell(model.margin * (dev[0] == 'n' ? 1.5 : 1.0));
      if (status != "pass") row.cells["reason"] = model.reason;
      out.push_back(row);
    }
    if (model.eager_ms == 0) continue;
    ResultRow row;
    row.kind = ExperimentKind::kPerformance;
    double compiled = model.compiled_ms * (model.name == "resnet50" ? slowdown_of_resnet50 : 1.0);
    double speedup = model.eager_ms / compiled;
    row.cells = {{"dev", "cuda"},
                 {"name", model.name},
                 {"backend", "jit"},
                 {"mode", "training"},
                 {"dtype", "float32"},
                 {"status", model.perf_status},
                 {"reason", model.perf_status == "pass" ? "" : model.reason}};
    if (model.perf_status == "pass") {
      row.cells["eager_latency"] = format_cell(model.eager_ms);
      row.cells["abs_latency"] = format_cell(compiled);
      row.cells["speedup"] = format_cell(speedup);
      row.cells["speedup_ci_low"] = format_cell(speedup * (model.unstable ? 0.9 : 0.97));
      row.cells["speedup_ci_high"] = format_cell(speedup * (model.unstable ? 1.12 : 1.03));
      row.cells["eager_op_ms"] = format_cell(model.eager_op_ms);
      row.cells["compiled_op_ms"] = format_cell(model.compiled_op_ms);
      row.cells["op_speedup"] = format_cell(model.eager_op_ms / model.compiled_op_ms);
      row.cells["compilation_latency"] = format_cell(model.eager_ms * 0.4);
      row.cells["compression_ratio"] = format_cell(1.0 + model.compiled_op_ms / 50);
      row.cells["unstable"] = model.unstable ? "1" : "0";
    } else {
      row.cells["speedup"] = "0";
    }
    out.push_back(row);
  }
  return out;
}

struct Browser {
  std::string chromium;
  std::string profile;  // a fresh user-data-dir per run: no state leaks between runs
  Browser(std::string binary) : chromium(std::move(binary)) {
    char path[] = "/tmp/zoobench-chromium-XXXXXX";
    profile = ::mkdtemp(path);
  }
  ~Browser() {
    zoobench::remove_tree(profile);
  }
  // Chromium's own stderr (GPU and dbus chatter) goes to a file beside its profile.
  zoobench::testing::CommandResult run(const std::string& args) {
    std::string command =
        "(timeout 60 " + chromium +
        " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
        " --disable-background-networking --disable-component-update --disable-sync"
        " --hide-scrollbars --user-data-dir=" +
        profile + " " + args + " 2>" + profile + "/stderr.log)";
    return zoobench::testing::run_command(command);
  }
  std::string log() const { return read_text_file(profile + "/stderr.log"); }
};

class BrowserReport : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    folder = zoobench::testing::binary_dir() + "/browser";
    fs::create_directories(folder);
    JoinedResults current = join_results(rows(1.4));
    ReportOptions options;
    options.title = "zoobench report \u2014 browser test";
    options.sources = {"demo/training_accuracy.csv", "demo/training_performance.csv"};
    options.baseline = compare_with_baseline(current, join_results(rows(1.0)));
    options.baseline_sources = {"baseline/training_performance.csv"};
    write_file_atomically(folder + "/report.html", render_html(current, options));
  }
  static std::string url(const std::string& fragment = "") {
    return "'file://" + folder + "/report.html" + fragment + "'";
  }
  static inline std::string folder;
  static inline std::string chromium;
};

std::vector<std::string> table_order(const std::string& dom) {
  std::string body = dom.substr(dom.find("id=\"models\""));
  body = body.substr(0, body.find("</tbody>"));
  std::vector<std::string> names;
  std::regex row_re("<tr data-model=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), row_re);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

TEST_F(BrowserReport, DomAfterScriptHasBarsStatusesAndSortedTable) {
  Browser browser(chromium);
  auto result = browser.run("--dump-dom " + url("#sort=E2E_speed_up_rate&order=desc"));
  ASSERT_EQ(result.exit_code, 0) << result.output << browser.log();
  const std::string& dom = result.output;
  ASSERT_NE(dom.find("data-sortable=\"ready\""), std::string::npos)
      << "the inline script did not run\n"
      << browser.log();

  // One bar per model and metric: every model with a passing performance row.
  for (const auto& model : models()) {
    bool has_bars = model.eager_ms > 0 && model.perf_status == "pass";
    std::string e2e = "class=\"bar e2e" + std::string(model.unstable ? " unstable" : "") +
                      "\" data-model=\"" + model.name + "\"";
    std::string op = "class=\"bar op\" data-model=\"" + model.name + "\"";
    EXPECT_EQ(count(dom, e2e), has_bars ? 1u : 0u) << model.name;
    EXPECT_EQ(count(dom, op), has_bars ? 1u : 0u) << model.name;
  }
  EXPECT_EQ(count(dom, "class=\"bar e2e"), 6u);
  EXPECT_EQ(count(dom, "class=\"bar op"), 6u);

  // A status cell per model and device in the models table.
  std::string table = dom.substr(dom.find("id=\"models\""));
  table = table.substr(0, table.find("</table>"));
  for (const auto& model : models()) {
    std::string row = table.substr(table.find("<tr data-model=\"" + model.name + "\""));
    row = row.substr(0, row.find("</tr>"));
    for (const auto& status : {model.cuda, model.npu}) {
      if (status.empty()) continue;
      EXPECT_NE(row.find("class=\"status status-" + status), std::string::npos)
          << model.name << " " << status;
      EXPECT_NE(row.find("data-status=\"" + status + "\""), std::string::npos) << model.name;
    }
  }

  // Sorted by E2E speedup, fastest first; models without one last.
  std::vector<std::string> expected;
  std::vector<std::pair<double, std::string>> speedups;
  for (const auto& model : models()) {
    if (model.eager_ms > 0 && model.perf_status == "pass") {
      double compiled = model.compiled_ms * (model.name == "resnet50" ? 1.4 : 1.0);
      speedups.emplace_back(model.eager_ms / compiled, model.name);
    }
  }
  std::sort(speedups.rbegin(), speedups.rend());
  for (const auto& [speedup, name] : speedups) expected.push_back(name);
  std::vector<std::string> order = table_order(dom);
  ASSERT_EQ(order.size(), models().size());
  EXPECT_EQ(std::vector<std::string>(order.begin(), order.begin() + expected.size()), expected);
  EXPECT_NE(dom.find("data-key=\"E2E_speed_up_rate\" class=\"num\" aria-sort=\"descending\""),
            std::string::npos);

  // Text from the results stays text.
  EXPECT_EQ(count(dom, "<script"), 1u);
  EXPECT_NE(dom.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // The regression against the baseline is marked.
  EXPECT_NE(dom.find("<tr data-model=\"resnet50\" class=\"regressed\">"), std::string::npos);
}

TEST_F(BrowserReport, Screenshot) {
  Browser browser(chromium);
  std::string png = folder + "/report.png";
  fs::remove(png);
  auto result = browser.run("--screenshot=" + png + " --window-size=1400,1000 " + url());
  ASSERT_EQ(result.exit_code, 0) << result.output << browser.log();
  ASSERT_TRUE(fs::exists(png)) << result.output << browser.log();
  std::string bytes = read_text_file(png);
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned char>(bytes[at]) << 24) |
           (static_cast<unsigned char>(bytes[at + 1]) << 16) |
           (static_cast<unsigned char>(bytes[at + 2]) << 8) |
           static_cast<unsigned char>(bytes[at + 3]);
  };
  EXPECT_EQ(be32(16), 1400u);
  EXPECT_EQ(be32(20), 1000u);
  // A blank page compresses to a few kB; a rendered report does not.
  EXPECT_GT(bytes.size(), 30000u);
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
}  // namespace zoobench::report

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string chromium = zoobench::report::find_chromium();
  if (chromium.empty()) {
    std::cout
        << "SKIPPED: no Chromium found (chromium, chromium-browser, google-chrome; or set "
           "ZOOBENCH_CHROMIUM). Install Debian's `chromium` (scripts/setup-deps.sh does) to run "
           "the browser test of the HTML report.\n";
    return zoobench::report::kSkip;
  }
  zoobench::report::BrowserReport::chromium = chromium;
  return RUN_ALL_TESTS();
}
