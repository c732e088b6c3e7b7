// End-to-end tests of the Python backends (python_eager and torch.compile's) through the real
// binary: the whole pipeline beside a C++ backend in one invocation, the identity check that
// refuses a rebuilt module which is not the exported model, a Python exception and a hang
// inside the backend, models without a Python source, and what a machine whose torch has no
// torch.compile says. Zoos come from make_zoo.py's py_* kinds, whose manifests name make_zoo.py
// as the rebuild source.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "integration_helpers.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;

// Whether `zoobench list --backends` says `backend` can run here.
bool available_here(const std::string& backend) {
  auto listing = zt::run_command(zoobench_command("list --backends"));
  EXPECT_EQ(listing.exit_code, 0) << listing.output;
  std::regex line("(^|\n)" + backend + " +available");
  return std::regex_search(listing.output, line);
}

std::map<std::string, Row> by_name(const std::vector<Row>& rows) {
  std::map<std::string, Row> out;
  for (const auto& row : rows) {
    EXPECT_EQ(out.count(row.at("name")), 0u) << "two rows for " << row.at("name");
    out[row.at("name")] = row;
  }
  return out;
}

TEST(PythonBackends, PythonEagerRunsThePipelineBesideJitInOneInvocation) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  make_zoo(zoo, suites, "py", {{"mlp", "py_mlp"}, {"conv", "py_conv"}});
  auto run = zt::run_command(zoobench_command(
      "run --suite py --accuracy --performance --backend jit,python_eager --repeat 5 "
      "--warmup 2 --timeout 300 --suites-dir " +
      quote(suites) + " --zoo " + quote(zoo) + " --output-directory " + quote(out)));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const std::string backend : {"jit", "python_eager"}) {
    SCOPED_TRACE(backend);
    auto accuracy = by_name(read_csv(accuracy_csv(out, "py", backend)));
    auto performance = by_name(read_csv(performance_csv(out, "py", backend)));
    ASSERT_EQ(accuracy.size(), 2u) << run.output;
    ASSERT_EQ(performance.size(), 2u) << run.output;
    for (const std::string model : {"mlp", "conv"}) {
      EXPECT_EQ(accuracy[model].at("accuracy"), "pass") << accuracy[model].at("reason");
      EXPECT_EQ(accuracy[model].at("backend"), backend);
      EXPECT_EQ(accuracy[model].at("suite"), "py");
      EXPECT_EQ(accuracy[model].at("backend_family"), backend == "jit" ? "zoobench" : "python");
      EXPECT_EQ(performance[model].at("status"), "pass") << performance[model].at("reason");
      EXPECT_GT(std::stod(performance[model].at("abs_latency")), 0.0);
      EXPECT_GT(std::stod(performance[model].at("speedup")), 0.0);
    }
  }
  // One invocation, one table: the run ends with the latency matrix of both backends.
  EXPECT_THAT(run.output, HasSubstr("### py \u00b7 cpu \u00b7 inference \u00b7 float32"));
  EXPECT_THAT(lines_with(run.output, "| model"), HasSubstr("python_eager"));
  EXPECT_THAT(lines_with(run.output, "| model"), HasSubstr("jit"));
}

TEST(PythonBackends, TorchCompileRunsOrSaysWhyNot) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  make_zoo(zoo, suites, "py", {{"mlp", "py_mlp"}});
  const bool available = available_here("inductor");
  auto run = zt::run_command(zoobench_command(
      "run --suite py --accuracy --backend inductor,aot_eager --timeout 600 "
      "--suites-dir " +
      quote(suites) + " --zoo " + quote(zoo) + " --output-directory " + quote(out)));
  if (!available) {
    // A torch without torch.compile: refused before any model starts, with the reason for
    // each backend, never a crash and never a failed row per model.
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr("--backend inductor cannot run here: torch.compile needs PyTorch >= 2.0"));
    EXPECT_THAT(run.output, HasSubstr("--backend aot_eager cannot run here"));
    EXPECT_FALSE(fs::exists(accuracy_csv(out, "py", "inductor")));
    return;
  }
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const std::string backend : {"inductor", "aot_eager"}) {
    SCOPED_TRACE(backend);
    auto rows = by_name(read_csv(accuracy_csv(out, "py", backend)));
    ASSERT_EQ(rows.size(), 1u) << run.output;
    const Row& row = rows["mlp"];
    EXPECT_EQ(row.at("backend_family"), "torch.compile");
    EXPECT_EQ(row.at("accuracy"), "pass") << row.at("reason");
    EXPECT_GE(std::stoi(row.at("graphs")), 1);
    EXPECT_EQ(row.at("graph_breaks"), "0");
  }
  // A name dynamo does not know is a typo: a usage error before anything runs.
  auto typo = zt::run_command(
      zoobench_command("run --suite py --accuracy --backend inductr --zoo " + quote(zoo) +
                       " --suites-dir " + quote(suites) + " --output-directory " + quote(out)));
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_THAT(typo.output, HasSubstr("dynamo has no backend 'inductr'"));
}

// --disable-switches reaches torch.compile's options: a conv model with Inductor's
// layout_optimization off still passes (on a torch with torch.compile: the GPU machine); on a
// torch without, the run is refused with the reason, as a run without switches is. The switches are static:
// listed and checked with no torch.compile at all.
TEST(PythonBackends, InductorWithASwitchOffPassesOrSaysWhyNot) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  make_zoo(zoo, suites, "py", {{"conv", "py_conv"}});
  const bool available = available_here("inductor");
  const std::string common =
      "run --suite py --accuracy --backend inductor --timeout 600 --suites-dir " + quote(suites) +
      " --zoo " + quote(zoo) + " --output-directory " + quote(out);
  auto run = zt::run_command(zoobench_command(common + " --disable-switches layout_optimization"));
  if (available) {
    ASSERT_EQ(run.exit_code, 0) << run.output;
    auto rows = by_name(read_csv(accuracy_csv(out, "py", "inductor")));
    ASSERT_EQ(rows.size(), 1u) << run.output;
    EXPECT_EQ(rows["conv"].at("accuracy"), "pass") << rows["conv"].at("reason");
  } else {
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr("torch.compile needs PyTorch >= 2.0"));
  }

  auto jit_switch = zt::run_command(zoobench_command(common + " --disable-switches freeze"));
  EXPECT_EQ(jit_switch.exit_code, 2) << jit_switch.output;
  EXPECT_THAT(jit_switch.output, HasSubstr("'freeze' is not a switch of inductor"));
  EXPECT_THAT(jit_switch.output, HasSubstr("pattern_matcher"));

  auto inductor = zt::run_command(zoobench_command("list --switches --backend inductor"));
  EXPECT_EQ(inductor.exit_code, 0) << inductor.output;
  EXPECT_THAT(inductor.output, HasSubstr("layout_optimization"));
  EXPECT_THAT(inductor.output, HasSubstr(R"([off: {"max_fusion_size":1}])"));
  auto aoti = zt::run_command(zoobench_command("list --switches --backend aot_inductor"));
  EXPECT_EQ(aoti.exit_code, 0) << aoti.output;
  EXPECT_THAT(aoti.output, HasSubstr("narrowing_memo"));
  EXPECT_THAT(aoti.output, HasSubstr("compiled into the package at export"));
}

TEST(PythonBackends, FailuresInsideThePythonBackendAreRows) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  make_zoo(zoo, suites, "py",
           {{"raiser", "py_raiser"},
            {"hang", "py_hang"},
            {"changed", "py_changed"},
            {"reseeded", "py_reseeded"},
            {"torchscript_only", "mlp"},
            {"good", "py_mlp"}});
  // Against eval.pt (--eager-reference torchscript), as a run with a TorchScript backend beside
  // does it: the rebuilt module must be the exported model. (With the Python module as the
  // reference there is nothing to prove it against: ExportOnDemand's recipe test.)
  auto run = zt::run_command(zoobench_command(
      "run --suite py --accuracy --backend python_eager --eager-reference torchscript"
      " --timeout 30 --suites-dir " +
      quote(suites) + " --zoo " + quote(zoo) + " --output-directory " + quote(out)));
  ASSERT_EQ(run.exit_code, 1) << run.output;  // five of the six fail
  auto rows = by_name(read_csv(accuracy_csv(out, "py", "python_eager")));
  ASSERT_EQ(rows.size(), 6u) << run.output;
  EXPECT_EQ(rows["good"].at("accuracy"), "pass") << rows["good"].at("reason");

  // A Python exception: the row has its line, the model's log the whole traceback.
  EXPECT_EQ(rows["raiser"].at("accuracy"), "fail_to_run");
  EXPECT_THAT(rows["raiser"].at("reason"), HasSubstr("RuntimeError: boom from Python on call 2"));
  const std::string log = read_text(rows["raiser"].at("log"));
  EXPECT_THAT(log, HasSubstr("Traceback (most recent call last)"));
  EXPECT_THAT(log, HasSubstr("python_models.py"));

  EXPECT_EQ(rows["hang"].at("accuracy"), "timeout");
  // Stopped inside the Python call: the worker's report still names the phase (the embedded
  // interpreter leaves SIGTERM to zoobench).
  EXPECT_THAT(rows["hang"].at("reason"), HasSubstr(", stopped during accuracy: python_eager"));
  // The identity check: a module that computes something else, or holds other weights, is
  // refused before anything compiles it.
  EXPECT_EQ(rows["changed"].at("accuracy"), "model_fail_to_load");
  EXPECT_THAT(rows["changed"].at("reason"), HasSubstr("is not the exported model"));
  EXPECT_EQ(rows["reseeded"].at("accuracy"), "model_fail_to_load");
  EXPECT_THAT(rows["reseeded"].at("reason"), HasSubstr("is not the exported model"));
  // A model added from a TorchScript file has no Python source.
  EXPECT_EQ(rows["torchscript_only"].at("accuracy"), "model_fail_to_load");
  EXPECT_THAT(rows["torchscript_only"].at("reason"), HasSubstr("--from-torchscript"));
}

TEST(PythonBackends, ListBackendsSaysWhatRunsHere) {
  auto listing = zt::run_command(zoobench_command("list --backends"));
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  for (const char* name : {"eager", "jit", "cudagraphs", "aot_inductor", "python_eager", "inductor",
                           "inductor:reduce-overhead", "aot_eager"}) {
    EXPECT_TRUE(std::regex_search(listing.output, std::regex(std::string("(^|\n)") + name + " ")))
        << name << " missing from:\n"
        << listing.output;
  }
  EXPECT_TRUE(available_here("python_eager")) << listing.output;
  EXPECT_TRUE(available_here("jit")) << listing.output;
  // Every backend that cannot run here says why.
  const auto no_lines = lines_with(listing.output, "  no  ");
  const auto why_lines = lines_with(listing.output, "why not:");
  EXPECT_EQ(std::count(no_lines.begin(), no_lines.end(), '\n'),
            std::count(why_lines.begin(), why_lines.end(), '\n'))
      << listing.output;
}

TEST(PythonBackends, CompileOptionsMustBeAJsonObjectAndExcludeAMode) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo");
  auto bad_json = zt::run_command(zoobench_command(
      "run --accuracy --zoo " + quote(zoo) + " --backend inductor --compile-options '{oops'"));
  EXPECT_EQ(bad_json.exit_code, 2) << bad_json.output;
  EXPECT_THAT(bad_json.output, HasSubstr("--compile-options is not JSON"));
  // 60,000 levels crashed zoobench (with any backend) in the recursive dump after parsing.
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  auto too_deep = zt::run_command(zoobench_command(
      "run --accuracy --zoo " + quote(zoo) + " --backend jit --compile-options '" + deep + "'"));
  EXPECT_EQ(too_deep.exit_code, 2) << too_deep.output.substr(0, 500);
  EXPECT_THAT(too_deep.output, HasSubstr("nested deeper than 16 levels"));
  auto with_mode =
      zt::run_command(zoobench_command("run --accuracy --zoo " + quote(zoo) +
                                       " --backend inductor:reduce-overhead --compile-options "
                                       "'{\"triton.cudagraphs\": false}'"));
  EXPECT_EQ(with_mode.exit_code, 2) << with_mode.output;
  EXPECT_THAT(with_mode.output, HasSubstr("a mode or options, not both"));
  auto unknown_mode = zt::run_command(
      zoobench_command("run --accuracy --zoo " + quote(zoo) + " --backend inductor:fast"));
  EXPECT_EQ(unknown_mode.exit_code, 2) << unknown_mode.output;
  EXPECT_THAT(unknown_mode.output, HasSubstr("unknown torch.compile mode 'fast'"));
}

}  // namespace
