// Inductor's compiler bisector as bisect reads it (bisect/compiler_bisector.h): the driver's
// result line, written here by the driver's own functions (tools/zoo_compile/compiler_bisect.py,
// with the reference Python), parsed among the progress lines around it; the report's text, its
// JSON and its summary; which backends it applies to. The search itself runs on the GPU
// machine (tests/integration/gpu/compiler_bisector_cuda_test.cpp).
#include "zoobench/bisect/compiler_bisector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/testing.h"

namespace zoobench {
namespace {

namespace zt = zoobench::testing;
using ::testing::HasSubstr;

// What the driver prints for `python_result` (a call of compiler_bisect.result), with the
// progress lines the bisector itself prints before it.
std::string driver_output(const std::string& python_result) {
  return zt::run_python("import sys\nsys.path.insert(0, '" + zt::repo_root() +
                        "/tools')\nfrom zoo_compile import compiler_bisect as cb\n"
                        "print('Moving to the next system: aot_eager')\n"
                        "print('Binary search completed for inductor - lowerings.')\n"
                        "print(cb.result_line(" +
                        python_result + "))\n")
      .output;
}

// A check as the driver records it: compiler_bisect.check_record, then its outcome.
const char* kFoundResult =
    "cb.result('found', '2.11.0', checks=["
    "dict(cb.check_record('eager', None, None, 'compile:eager'), status='pass', max_abs='0.0', "
    "reason='', log='l1', seconds=2.0), "
    "dict(cb.check_record('inductor', 'lowerings', 'find_max_bounds', 'inductor:max-autotune'), "
    "status='fail_accuracy', max_abs='0.5', reason='1/1 tensors differ', log='l2', seconds=9.5, "
    "range=[0, 7]), "
    "dict(cb.check_record('inductor', 'lowerings', 'bisect', 'inductor:max-autotune'), "
    "status='crash', max_abs='', reason='killed by SIGSEGV', log='l3', seconds=1.0, range=[2, "
    "3])], "
    "backend='inductor', subsystem='lowerings', bisect_number=2, debug_info='relu')";

TEST(CompilerBisectorResult, TheDriversFoundLineIsParsedWithItsChecks) {
  const auto report = parse_compiler_bisector_output(driver_output(kFoundResult));
  EXPECT_EQ(report.status, CompilerBisectorStatus::kFound) << report.note;
  EXPECT_EQ(report.torch_version, "2.11.0");
  EXPECT_EQ(report.backend, "inductor");
  EXPECT_EQ(report.subsystem, "lowerings");
  ASSERT_TRUE(report.bisect_number.has_value());
  EXPECT_EQ(*report.bisect_number, 2);
  EXPECT_EQ(report.debug_info, "relu");
  EXPECT_EQ(report.config_change, "");
  ASSERT_EQ(report.checks.size(), 3u);
  EXPECT_EQ(report.checks[0].backend, "eager");
  EXPECT_EQ(report.checks[0].zoobench_backend, "compile:eager");
  EXPECT_TRUE(report.checks[0].passed());
  EXPECT_FALSE(report.checks[0].range.has_value());
  const auto& bounds = report.checks[1];
  EXPECT_EQ(bounds.subsystem, "lowerings");
  EXPECT_EQ(bounds.run_state, "find_max_bounds");
  EXPECT_EQ(bounds.zoobench_backend, "inductor:max-autotune");
  EXPECT_EQ(bounds.status, "fail_accuracy");
  EXPECT_EQ(bounds.max_abs, "0.5");
  EXPECT_EQ(bounds.log, "l2");
  EXPECT_DOUBLE_EQ(bounds.seconds, 9.5);
  ASSERT_TRUE(bounds.range.has_value());
  EXPECT_EQ(bounds.range->second, 7);
  EXPECT_EQ(report.checks[2].status, "crash");
  EXPECT_FALSE(report.checks[2].passed());

  const std::string text = format_compiler_bisector(report);
  EXPECT_THAT(text, HasSubstr("Inductor's compiler bisector (torch 2.11.0, 3 checks): first fails "
                              "at backend inductor, subsystem lowerings, bisect number 2 (debug "
                              "info: relu)"));
  EXPECT_THAT(text, HasSubstr("3. inductor lowerings bisect [2, 3] -> crash (killed by SIGSEGV)"));
  EXPECT_EQ(compiler_bisector_summary(report), "inductor lowerings #2 (relu)");

  const auto json = compiler_bisector_json(report);
  EXPECT_EQ(json["status"], "found");
  EXPECT_EQ(json["backend"], "inductor");
  EXPECT_EQ(json["subsystem"], "lowerings");
  EXPECT_EQ(json["bisect_number"], 2);
  EXPECT_EQ(json["debug_info"], "relu");
  ASSERT_EQ(json["checks"].size(), 3u);
  EXPECT_EQ(json["checks"][1]["range"], nlohmann::json::array({0, 7}));
  EXPECT_TRUE(json["checks"][0]["range"].is_null());
  EXPECT_EQ(json["checks"][2]["passed"], false);
}

TEST(CompilerBisectorResult, AConfigChangeIsNamedInsteadOfANumber) {
  const auto report = parse_compiler_bisector_output(driver_output(
      "cb.result('found', '2.11.0', backend='inductor', subsystem='inductor_layout_optimization', "
      "bisect_number=0, debug_info='inductor_layout_optimization', "
      "config_change='inductor.layout_optimization=False')"));
  ASSERT_EQ(report.status, CompilerBisectorStatus::kFound) << report.note;
  EXPECT_THAT(format_compiler_bisector(report),
              HasSubstr("subsystem inductor_layout_optimization (the config change "
                        "inductor.layout_optimization=False fixes it)"));
  EXPECT_EQ(compiler_bisector_summary(report), "inductor inductor_layout_optimization");
}

TEST(CompilerBisectorResult, AStageWithoutASubsystemIsTheStageAsAWhole) {
  const auto report = parse_compiler_bisector_output(
      driver_output("cb.result('found', '2.11.0', backend='aot_eager_decomp_partition_crossref')"));
  ASSERT_EQ(report.status, CompilerBisectorStatus::kFound) << report.note;
  EXPECT_FALSE(report.bisect_number.has_value());
  EXPECT_THAT(format_compiler_bisector(report),
              HasSubstr("first fails at backend aot_eager_decomp_partition_crossref (no subsystem "
                        "of it found: the stage as a whole)"));
  EXPECT_TRUE(compiler_bisector_json(report)["bisect_number"].is_null());
}

TEST(CompilerBisectorResult, NotAvailableSaysTheSwitchesWereBisectedInstead) {
  const auto report = parse_compiler_bisector_output(
      driver_output("cb.result('not_available', '1.13.0', 'torch 1.13.0 has no "
                    "torch._inductor.compiler_bisector')"));
  EXPECT_EQ(report.status, CompilerBisectorStatus::kNotAvailable);
  EXPECT_EQ(format_compiler_bisector(report),
            "Inductor's compiler bisector: not available (torch 1.13.0 has no "
            "torch._inductor.compiler_bisector); the config switches were bisected instead\n");
  EXPECT_EQ(compiler_bisector_json(report)["status"], "not_available");
  EXPECT_EQ(compiler_bisector_summary(report), "not available");
}

TEST(CompilerBisectorResult, TheLastResultLineWinsAndAMissingOneIsAnError) {
  const std::string first = driver_output("cb.result('no_issue_found', '2.11.0', 'nothing')");
  const std::string second = driver_output("cb.result('error', '2.11.0', 'RuntimeError: boom')");
  EXPECT_EQ(parse_compiler_bisector_output(first + second).status, CompilerBisectorStatus::kError);
  EXPECT_EQ(parse_compiler_bisector_output(second + first).status,
            CompilerBisectorStatus::kNoIssueFound);

  const auto none = parse_compiler_bisector_output("Bisection status deleted.\nTraceback ...\n");
  EXPECT_EQ(none.status, CompilerBisectorStatus::kError);
  EXPECT_THAT(none.note, HasSubstr("without a result line"));
  const auto cut = parse_compiler_bisector_output(std::string(kCompilerBisectorResultPrefix) +
                                                  "{\"status\": \"fou");
  EXPECT_EQ(cut.status, CompilerBisectorStatus::kError);
  EXPECT_THAT(cut.note, HasSubstr("does not parse"));
  const auto unknown = parse_compiler_bisector_output(std::string(kCompilerBisectorResultPrefix) +
                                                      "{\"status\": \"maybe\"}");
  EXPECT_EQ(unknown.status, CompilerBisectorStatus::kError);
  EXPECT_THAT(unknown.note, HasSubstr("unknown status 'maybe'"));
}

TEST(CompilerBisectorResult, NotApplicablePrintsNothingAndNotRunSaysWhy) {
  CompilerBisectorReport report;
  EXPECT_EQ(format_compiler_bisector(report), "");
  EXPECT_EQ(compiler_bisector_json(report)["status"], "not_applicable");
  report.status = CompilerBisectorStatus::kNotRun;
  report.note = "--no-compiler-bisector";
  EXPECT_EQ(format_compiler_bisector(report),
            "Inductor's compiler bisector: not run (--no-compiler-bisector)\n");
}

TEST(CompilerBisectorBackends, OnlyInductorThroughTorchCompile) {
  for (const char* name : {"inductor", "inductor:max-autotune", "inductor:reduce-overhead",
                           "compile:inductor", "compile:inductor:max-autotune"})
    EXPECT_TRUE(uses_inductor(name)) << name;
  for (const char* name : {"jit", "eager", "cudagraphs", "aot_inductor", "python_eager",
                           "aot_eager", "compile:eager", "inductor_like"})
    EXPECT_FALSE(uses_inductor(name)) << name;
}

}  // namespace
}  // namespace zoobench
