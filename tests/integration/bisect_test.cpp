// End-to-end tests of `zoobench bisect` and `zoobench run --disable-switches` on planted faults:
// test-only patches (patches/planted_faults.h) that perturb one named child of a model on the
// compiled side only, assigned through the suite yaml. The real binary, real child processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "integration_helpers.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;
using ::testing::ElementsAre;

struct PlantedZoo {
  zt::ScratchDir dir;
  std::string zoo = dir.file("zoo"), suites = dir.file("suites");
  PlantedZoo() {
    struct rlimit none {};
    ::setrlimit(RLIMIT_CORE, &none);  // the segfaulting model leaves no core file
    write_text(suites + "/planted.yaml",
               "zoobench:\n"
               "  patches:\n"
               "    scaled: [test_scale_planted]\n"
               "    pair: [test_offset_pair_a, test_offset_pair_b]\n"
               "    half_pair: [test_offset_pair_a]\n"
               "    segfaulter: [fault_injection]\n"
               "    kept_off: [test_scale_planted]\n"
               "  switches_off:\n"
               "    kept_off:\n"
               "      jit: [freeze, patch:test_scale_planted]\n"
               "      reason: the planted scale breaks it\n"
               "    misnamed:\n"
               "      jit: [freez]\n"
               "      reason: a typo\n");
    make_zoo(zoo, suites, "planted",
             {{"scaled", "planted"},
              {"kept_off", "planted"},
              {"misnamed", "mlp"},
              {"pair", "pair"},
              {"half_pair", "pair"},
              {"good", "mlp"},
              {"segfaulter", "segfault"},
              {"hang", "hang"}});
  }
  // Runs bisect on `model`; returns its output and bisect.json.
  std::pair<zt::CommandResult, nlohmann::json> bisect(const std::string& model,
                                                      const std::string& extra = "") {
    const std::string out = dir.file("bisect_" + model);
    auto result = zt::run_command(zoobench_command(
        "bisect --suite planted --only " + model + " --tol 0.01 --zoo " + quote(zoo) +
        " --suites-dir " + quote(suites) + " --output-directory " + quote(out) + " " + extra));
    nlohmann::json record;
    if (fs::exists(out + "/bisect.json")) record = nlohmann::json::parse(read_text(out + "/bisect.json"));
    return {result, record};
  }
};

PlantedZoo& zoo() {
  static PlantedZoo* shared = new PlantedZoo();  // one export for every test of this file
  return *shared;
}

std::vector<std::string> names(const nlohmann::json& list) {
  return list.get<std::vector<std::string>>();
}

TEST(Bisect, ScaledLayerIsFoundAsItsPatch) {
  auto [run, record] = zoo().bisect("scaled");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(record["verdict"], "found") << run.output;
  EXPECT_THAT(names(record["culprit"]), ElementsAre("patch:test_scale_planted"));
  EXPECT_THAT(names(record["fix"]), ElementsAre("patch:test_scale_planted"));
  EXPECT_THAT(run.output, HasSubstr("found: patch:test_scale_planted breaks it"));
  // Every jit switch of a CPU inference run was searched.
  EXPECT_THAT(names(record["switches"]),
              ElementsAre("freeze", "fold_frozen", "optimize_for_inference", "executor",
                          "nnc_fuser", "patch:test_scale_planted"));
  EXPECT_EQ(record["steps"][0]["status"], "fail_accuracy");
  EXPECT_NE(record["steps"][0]["max_abs"], "");
  EXPECT_TRUE(fs::is_regular_file(record["steps"][0]["log"].get<std::string>()));
  // Each step is a child process that loads and runs the model: it takes time, and the record
  // says how much (it said 0 for every step until the wall time was taken).
  for (const auto& step : record["steps"]) EXPECT_GT(step["seconds"].get<double>(), 0.0) << step.dump();
}

// The first diverging submodule: the planted layer fails alone on the inputs eager gave it,
// `body` (called before it) does not, nor does its own child `post` (the search goes one level
// deeper and comes back to it, as it did at Longformer's self-attention on the H200); its repro
// folder runs as a model of its own and fails there too, and its saved float32 and float64
// outputs agree with each other.
TEST(Bisect, ScaledLayerIsTheFirstDivergingSubmoduleWithARepro) {
  auto [run, record] = zoo().bisect("scaled");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto& divergence = record["divergence"];
  EXPECT_EQ(divergence["verdict"], "found") << divergence.dump(2);
  EXPECT_EQ(divergence["path"], "planted");
  ASSERT_EQ(divergence["checks"].size(), 3u) << divergence.dump(2);
  EXPECT_EQ(divergence["checks"][0]["path"], "body");
  EXPECT_EQ(divergence["checks"][0]["status"], "pass");
  EXPECT_EQ(divergence["checks"][1]["path"], "planted");
  EXPECT_EQ(divergence["checks"][1]["type"], "PlantedLinear");
  EXPECT_EQ(divergence["checks"][1]["status"], "fail_accuracy");
  EXPECT_EQ(divergence["checks"][2]["path"], "planted.post");
  EXPECT_EQ(divergence["checks"][2]["status"], "pass");
  for (const auto& check : divergence["checks"]) EXPECT_GT(check["seconds"].get<double>(), 0.0) << check.dump();
  EXPECT_EQ(divergence["note"], "none of its 1 children checked fails alone");
  EXPECT_THAT(run.output, HasSubstr("first diverging submodule: planted (PlantedLinear)"));

  const fs::path repro = divergence["repro"].get<std::string>();
  for (const char* file : {"manifest.json", "eval.pt", "inputs.pt", "eager.pt", "float64.pt"})
    EXPECT_TRUE(fs::is_regular_file(repro / file)) << file;
  const auto manifest = nlohmann::json::parse(read_text((repro / "manifest.json").string()));
  EXPECT_THAT(manifest["patches"].get<std::vector<std::string>>(), ElementsAre("test_scale_planted"));
  EXPECT_EQ(manifest["submodule_of"]["path"], "planted");

  // The repro alone reproduces the failure, and passes with its patch off.
  const std::string zoo_dir = repro.parent_path().parent_path().string();
  const std::string common = "run --suite planted --only 'scaled@planted' --accuracy --tol 0.01 --zoo " +
                             quote(zoo_dir) + " --suites-dir " + quote(zoo().suites) + " --output-directory ";
  std::string out = zoo().dir.file("repro_run");
  auto again = zt::run_command(zoobench_command(common + quote(out)));
  ASSERT_EQ(again.exit_code, 1) << again.output;  // the failure, reproduced
  auto rows = read_csv(accuracy_csv(out, "planted"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("accuracy"), "fail_accuracy");
  EXPECT_EQ(rows[0].at("patches"), "test_scale_planted");
  out = zoo().dir.file("repro_run_patch_off");
  auto off = zt::run_command(
      zoobench_command(common + quote(out) + " --disable-switches patch:test_scale_planted"));
  ASSERT_EQ(off.exit_code, 0) << off.output;
  rows = read_csv(accuracy_csv(out, "planted"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("accuracy"), "pass");

  // The check saved the outputs: zoobench same gives its verdict from the files alone.
  const fs::path outputs = repro / "outputs" / "planted" / "scaled@planted";
  auto same = zt::run_command(zoobench_command(
      "same " + quote((outputs / "eager.pt").string()) + " " + quote((outputs / "jit.pt").string()) +
      " --fp64 " + quote((outputs / "float64.pt").string()) + " --tol 0.01"));
  EXPECT_EQ(same.exit_code, 1) << same.output;
  EXPECT_THAT(run.output, HasSubstr("zoobench same "));
}

TEST(Bisect, FaultOfTwoPatchesTogetherIsFoundAsThePair) {
  // One offset alone stays within tolerance: the model with only one of them passes.
  const std::string out = zoo().dir.file("half_pair_run");
  auto run = zt::run_command(zoobench_command(
      "run --suite planted --only half_pair --accuracy --tol 0.01 --zoo " +
      quote(zoo().zoo) + " --suites-dir " + quote(zoo().suites) + " --output-directory " +
      quote(out)));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto rows = read_csv(accuracy_csv(out, "planted"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("accuracy"), "pass");

  auto [bisect, record] = zoo().bisect("pair");
  ASSERT_EQ(bisect.exit_code, 0) << bisect.output;
  EXPECT_EQ(record["verdict"], "found") << bisect.output;
  EXPECT_THAT(names(record["culprit"]),
              ElementsAre("patch:test_offset_pair_a", "patch:test_offset_pair_b"));
  // Either one off is enough.
  ASSERT_EQ(record["fix"].size(), 1u);
  EXPECT_THAT(record["fix"][0].get<std::string>(), HasSubstr("patch:test_offset_pair_"));
  EXPECT_THAT(bisect.output, HasSubstr("break it together"));
  // Each offset alone stays within tolerance: no child of the model fails alone.
  EXPECT_EQ(record["divergence"]["verdict"], "no_child_fails_alone") << record["divergence"].dump(2);
  EXPECT_EQ(record["divergence"]["checks"].size(), 3u);
}

TEST(Bisect, PassingModelHasNothingToBisect) {
  auto [run, record] = zoo().bisect("good");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(record["verdict"], "nothing_to_bisect");
  EXPECT_EQ(record["steps"].size(), 1u);
  EXPECT_THAT(run.output, HasSubstr("nothing to bisect"));
  EXPECT_EQ(record["divergence"]["verdict"], "not_searched");
  EXPECT_EQ(record["divergence"]["checks"].size(), 0u);
}

TEST(Bisect, CrashingAndHangingStepsAreFailingStepsWithTheirStatus) {
  {
    auto [run, record] = zoo().bisect("segfaulter");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(record["verdict"], "fails_without_optimization") << run.output;
    ASSERT_EQ(record["steps"].size(), 2u);
    EXPECT_EQ(record["steps"][0]["status"], "crash");
    EXPECT_THAT(record["steps"][0]["reason"].get<std::string>(), HasSubstr("SIGSEGV"));
    // Everything off includes its patch, which declares the operator the model calls.
    EXPECT_EQ(record["steps"][1]["status"], "model_fail_to_load");
    for (const auto& step : record["steps"]) EXPECT_FALSE(step["passed"].get<bool>());
    EXPECT_THAT(run.output, HasSubstr("fails with no optimization"));
    EXPECT_THAT(run.output, HasSubstr("SIGSEGV"));
  }
  {
    auto [run, record] = zoo().bisect("hang", "--timeout 3");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(record["verdict"], "fails_without_optimization") << run.output;
    for (const auto& step : record["steps"]) EXPECT_EQ(step["status"], "timeout");
  }
}

// zoobench.switches_off: the suite keeps a patch that breaks the model (and freeze) off for jit;
// the row passes and names them in switches_off; --ignore-suite-switches brings the fault back,
// and bisect searches them only then (freeze's dependants, fold_frozen and
// optimize_for_inference, are left out with it).
TEST(SuiteSwitchesOff, KeptOffInRunAndBisectUnlessIgnored) {
  auto run_kept_off = [](const std::string& out, const std::string& extra) {
    auto run = zt::run_command(zoobench_command(
        "run --suite planted --only kept_off --accuracy --tol 0.01 --zoo " +
        quote(zoo().zoo) + " --suites-dir " + quote(zoo().suites) + " --output-directory " +
        quote(out) + " " + extra));
    // Exit 1 where the planted fault fails the check (the suite's switches ignored).
    EXPECT_EQ(run.exit_code, extra.empty() ? 0 : 1) << run.output;
    auto rows = read_csv(accuracy_csv(out, "planted"));
    EXPECT_EQ(rows.size(), 1u) << run.output;
    return rows.empty() ? std::map<std::string, std::string>{} : rows[0];
  };
  auto kept = run_kept_off(zoo().dir.file("kept_off_run"), "");
  EXPECT_EQ(kept["accuracy"], "pass");
  EXPECT_EQ(kept["switches_off"], "freeze;patch:test_scale_planted");
  EXPECT_EQ(kept["patches"], "");
  auto ignored = run_kept_off(zoo().dir.file("kept_off_ignored"), "--ignore-suite-switches");
  EXPECT_EQ(ignored["accuracy"], "fail_accuracy");
  EXPECT_EQ(ignored["switches_off"], "");
  EXPECT_EQ(ignored["patches"], "test_scale_planted");

  {
    auto [run, record] = zoo().bisect("kept_off", "--no-submodules");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(record["verdict"], "nothing_to_bisect") << run.output;
    EXPECT_THAT(names(record["switches"]), ElementsAre("executor", "nnc_fuser"));
    EXPECT_THAT(names(record["suite_switches_off"]["switches"]),
                ElementsAre("freeze", "patch:test_scale_planted"));
    EXPECT_THAT(run.output, HasSubstr("the suite turns off freeze, patch:test_scale_planted for "
                                      "this model in every step, not searched"));
  }
  {
    auto [run, record] = zoo().bisect("kept_off", "--no-submodules --ignore-suite-switches");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(record["verdict"], "found") << run.output;
    EXPECT_THAT(names(record["culprit"]), ElementsAre("patch:test_scale_planted"));
    EXPECT_TRUE(record["suite_switches_off"]["switches"].empty());
  }
}

// A switch name the backend does not have is a mistake in the yaml: the row says where and what
// to do instead of running with the pass on.
TEST(SuiteSwitchesOff, AnUnknownSwitchNameIsAnErrorRowThatNamesTheYaml) {
  const std::string out = zoo().dir.file("misnamed_run");
  auto run = zt::run_command(zoobench_command(
      "run --suite planted --only misnamed --accuracy --zoo " + quote(zoo().zoo) +
      " --suites-dir " + quote(zoo().suites) + " --output-directory " + quote(out)));
  auto rows = read_csv(accuracy_csv(out, "planted"));
  ASSERT_EQ(rows.size(), 1u) << run.output;
  EXPECT_EQ(rows[0].at("accuracy"), "infra_error");
  EXPECT_THAT(rows[0].at("reason"),
              HasSubstr("planted.yaml zoobench.switches_off.misnamed: 'freez' is not a switch of jit"));
  EXPECT_THAT(rows[0].at("reason"), HasSubstr("--ignore-suite-switches"));
}

// An interrupt during the submodule search (Ctrl-C, a call's deadline) keeps what the switch
// search found: bisect.json is written before the longer searches start (a crash after the
// switches once lost them on the H200).
TEST(Bisect, AnInterruptDuringTheSubmoduleSearchKeepsWhatTheSwitchesFound) {
  const std::string out = zoo().dir.file("bisect_interrupted"), log = zoo().dir.file("interrupted.log");
  const std::string command =
      "exec " + zoobench_command("bisect --suite planted --only scaled --tol 0.01 --zoo " +
                                 quote(zoo().zoo) + " --suites-dir " + quote(zoo().suites) +
                                 " --output-directory " + quote(out)) +
      " > " + quote(log) + " 2>&1";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Interrupted once the search has begun (its first line), as a user's Ctrl-C would.
  for (int i = 0; i < 3000 && read_text(log).find("bisect: capturing the children") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const std::string output = read_text(log);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 130) << output;
  EXPECT_THAT(output, HasSubstr("stopped before it finished; what it found so far: "));
  const auto record = nlohmann::json::parse(read_text(out + "/bisect.json"));
  EXPECT_THAT(names(record["culprit"]), ElementsAre("patch:test_scale_planted"));
  EXPECT_EQ(record["divergence"]["note"], "not finished: the search was still running");
  EXPECT_EQ(record["model"], "scaled");
}

// --from-results: every failing row of an accuracy file is bisected with its own backend,
// device, mode and dtype, and one summary table names each verdict; passing rows are left out.
TEST(Bisect, FromResultsBisectsEachFailingRowAndSummarisesThem) {
  const std::string run_out = zoo().dir.file("from_results_run");
  auto run = zt::run_command(zoobench_command(
      "run --suite planted -k '^(scaled|good)$' --accuracy --tol 0.01 --zoo " +
      quote(zoo().zoo) + " --suites-dir " + quote(zoo().suites) + " --output-directory " +
      quote(run_out)));
  ASSERT_EQ(run.exit_code, 1) << run.output;  // scaled fails
  const std::string csv = accuracy_csv(run_out, "planted");

  const std::string out = zoo().dir.file("from_results_bisect");
  auto bisect = zt::run_command(zoobench_command(
      "bisect --from-results " + quote(csv) + " --tol 0.01 --zoo " + quote(zoo().zoo) +
      " --suites-dir " + quote(zoo().suites) + " --output-directory " + quote(out)));
  ASSERT_EQ(bisect.exit_code, 0) << bisect.output;
  EXPECT_THAT(bisect.output, HasSubstr("1 failing rows"));
  EXPECT_THAT(bisect.output, HasSubstr("| scaled "));
  EXPECT_THAT(bisect.output, HasSubstr("| first diverging submodule |"));
  EXPECT_THAT(bisect.output, HasSubstr("| planted "));
  EXPECT_EQ(bisect.output.find("| good "), std::string::npos) << bisect.output;
  const auto summary = nlohmann::json::parse(read_text(out + "/bisect-summary.json"));
  ASSERT_EQ(summary["bisects"].size(), 1u) << summary.dump(2);
  const auto& record = summary["bisects"][0];
  EXPECT_EQ(record["model"], "scaled");
  EXPECT_EQ(record["verdict"], "found");
  EXPECT_THAT(names(record["culprit"]), ElementsAre("patch:test_scale_planted"));
  EXPECT_TRUE(fs::is_regular_file(out + "/scaled.jit.cpu/bisect.json"));

  auto both = zt::run_command(zoobench_command("bisect --only scaled --from-results " + quote(csv)));
  EXPECT_EQ(both.exit_code, 2) << both.output;
}

TEST(DisableSwitches, TurnsThePatchOffAndRefusesUnknownNames) {
  const std::string out = zoo().dir.file("switch_run");
  const std::string common = "run --suite planted --only scaled --accuracy --tol 0.01 --zoo " +
                             quote(zoo().zoo) + " --suites-dir " + quote(zoo().suites) +
                             " --output-directory " + quote(out);
  auto run = zt::run_command(
      zoobench_command(common + " --disable-switches freeze,patch:test_scale_planted"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto rows = read_csv(accuracy_csv(out, "planted"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("accuracy"), "pass");
  EXPECT_EQ(rows[0].at("patches"), "");

  auto bad = zt::run_command(zoobench_command(common + " --disable-switches freez"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("'freez' is not a switch of jit"));
  EXPECT_THAT(bad.output, HasSubstr("optimize_for_inference"));

  auto listing = zt::run_command(zoobench_command("list --switches --backend jit"));
  EXPECT_EQ(listing.exit_code, 0);
  for (const char* name : {"freeze", "fold_frozen", "optimize_for_inference", "executor",
                           "nnc_fuser", "cudagraphs", "patch:<name>"})
    EXPECT_THAT(listing.output, HasSubstr(name));
}

}  // namespace
