// End-to-end tests of `zoobench run` over whole suites: the real binary, zoos made by the
// exporter's --from-torchscript path (make_zoo.py), faulty models that raise, hang, abort,
// segfault or exhaust memory, damaged artifacts, SIGINT and --resume, partitions and merge,
// two workers on one device, the compare gate, and the messages for bad input.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "integration_helpers.h"
#include "zoobench/runner/output_lock.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;

// The aborting and segfaulting models must not leave core files behind (children inherit it).
void disable_core_dumps() {
  struct rlimit none {};
  ::setrlimit(RLIMIT_CORE, &none);
}

bool wait_until(const std::function<bool()>& condition, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

// Starts `zoobench <arguments>` with its output in `output_path`; returns its pid.
pid_t spawn_zoobench(const std::vector<std::string>& arguments, const std::string& output_path) {
  std::vector<std::string> argv = {ZOOBENCH_EXECUTABLE};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

// Processes (other than this one) whose command line mentions `text`.
std::vector<std::string> processes_mentioning(const std::string& text) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid == std::to_string(::getpid())) continue;
    std::string cmdline = read_text(entry.path().string() + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (cmdline.find(text) != std::string::npos) found.push_back(pid + ": " + cmdline);
  }
  return found;
}

// upstream's tolerance.accuracy_check_runs reaches the experiment: the named model's compiled
// side runs that many times (the record says so), the others once.
TEST(SuiteRun, AccuracyCheckRunsFromTheYamlVote) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  write_text(suites + "/voted.yaml", "tolerance:\n  accuracy_check_runs:\n    flaky: 3\n");
  make_zoo(zoo, suites, "voted", {{"flaky", "mlp"}, {"steady", "mlp"}});
  auto run = zt::run_command(zoobench_command("run --suite voted --accuracy --suites-dir " + quote(suites) + " --zoo " +
                                      quote(zoo) + " --output-directory " + quote(out)));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto json = nlohmann::json::parse(read_text(out + "/voted_jit_inference_float32_cpu_accuracy.json"));
  std::map<std::string, int> runs;
  for (const auto& record : json.at("records")) {
    EXPECT_EQ(record.at("cells").at("accuracy"), "pass");
    runs[record.at("cells").at("name")] = record.at("detail").at("check_runs").get<int>();
  }
  EXPECT_EQ(runs, (std::map<std::string, int>{{"flaky", 3}, {"steady", 1}}));
}

// accuracy.skip.large_models keeps a model from its check, not from its timing, whether the two
// experiments run in one invocation or two; and a --resume that checks again adds no second row
// (on the H200 a check-only resume gave DebertaV2ForMaskedLM a pass_due_to_skip row beside the
// pass of a combined run, and reports showed the later one; 2026-12-03).
TEST(SuiteRun, AnAccuracySkipSkipsTheCheckNotTheTimingAndResumeAddsNoSecondRow) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  write_text(suites + "/sized.yaml", "accuracy:\n  skip:\n    large_models:\n      - big\n");
  make_zoo(zoo, suites, "sized", {{"big", "mlp"}, {"small", "mlp"}});
  const std::string common = "run --suite sized --suites-dir " + quote(suites) + " --zoo " + quote(zoo) +
                             " --output-directory " + quote(out);
  auto both = zt::run_command(zoobench_command(
      common + " --accuracy --performance --repeat 3 --warmup 1 --iterations-per-run 1"));
  ASSERT_EQ(both.exit_code, 0) << both.output;
  // The summary says what the host was doing while it timed.
  EXPECT_THAT(both.output, ::testing::ContainsRegex("host: load average [0-9.]+ over the last "
                                                    "minute on [0-9]+ CPU"));
  using Statuses = std::multiset<std::pair<std::string, std::string>>;
  const Statuses checked = {{"big", "pass_due_to_skip"}, {"small", "pass"}};
  EXPECT_EQ(names_and_statuses(read_csv(accuracy_csv(out, "sized"))), checked) << both.output;
  EXPECT_EQ(names_and_statuses(read_csv(performance_csv(out, "sized")), "status"),
            (Statuses{{"big", "pass"}, {"small", "pass"}}))
      << both.output;

  auto again = zt::run_command(zoobench_command(common + " --accuracy --resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(names_and_statuses(read_csv(accuracy_csv(out, "sized"))), checked) << again.output;
}

// --- one suite run over a zoo of faulty models ---------------------------------------------

// `--only` ran its model in zoobench's own process: a segfault killed zoobench (no row) and a
// hanging model ran past --timeout forever. It runs in a process of its own, as a suite's models
// do; --in-process keeps the old way for a debugger.
TEST(SuiteRun, OnlyIsIsolatedLikeASuiteRun) {
  zt::ScratchDir dir;
  disable_core_dumps();
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites");
  write_text(suites + "/faulty.yaml", "zoobench:\n  patches:\n    segfaulter: [fault_injection]\n");
  make_zoo(zoo, suites, "faulty", {{"segfaulter", "segfault"}, {"hang", "hang"}});
  const auto only = [&](const std::string& model, const std::string& out) {
    return zt::run_command(zoobench_command("run --suite faulty --accuracy --timeout 5 --only " +
                                            model + " --suites-dir " + quote(suites) + " --zoo " +
                                            quote(zoo) + " --output-directory " + quote(out)) +
                           " 2>&1");
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"segfaulter", "SIGSEGV during accuracy"}, {"hang", "--timeout"}};
  for (const auto& [model, reason] : cases) {
    SCOPED_TRACE(model);
    const std::string out = dir.file("out-" + model);
    const auto started = std::chrono::steady_clock::now();
    auto run = only(model, out);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
    EXPECT_EQ(run.exit_code, 1) << run.output;
    auto rows = read_csv(accuracy_csv(out, "faulty"));
    ASSERT_EQ(rows.size(), 1u) << run.output;
    EXPECT_EQ(rows[0].at("accuracy"), model == "hang" ? "timeout" : "crash");
    EXPECT_THAT(rows[0].at("reason"), HasSubstr(reason));
  }
  auto in_process = zt::run_command(
      zoobench_command("run --suite faulty --accuracy --in-process --only segfaulter --suites-dir " +
                       quote(suites) + " --zoo " + quote(zoo) + " --output-directory " +
                       quote(dir.file("out-in-process"))) + " 2>&1");
  EXPECT_NE(in_process.exit_code, 0);
  EXPECT_NE(in_process.exit_code, 1) << "a crash in zoobench's own process is no verdict";
}

struct FaultyExpected {
  std::string name, status;
  std::vector<std::string> reason_parts;
};

// Each model of the faulty zoo: its status and what its reason says.
std::vector<FaultyExpected> faulty_zoo_expectations() {
  // The raiser and the allocation fail in the eager reference itself (fp64 golden, then eager
  // run 1): upstream's eager_1st_run_fail / eager_1st_run_OOM, not the compiled backend's
  // fail_to_run / OOM.
  return {
      {"good_mlp", "pass", {}},
      {"good_conv", "pass", {}},
      {"raiser", "eager_1st_run_fail", {"boom: this model raises on purpose"}},
      // The worker's report of the SIGTERM that stopped it says where it hung.
      {"hang", "timeout", {"20s", "--timeout", "stopped during accuracy: float64 golden run"}},
      // The first run is the float64 golden one; the child's crash report names it.
      {"aborter", "crash", {"SIGABRT during accuracy: float64 golden run", "backtrace in the log"}},
      {"segfaulter",
       "crash",
       {"SIGSEGV during accuracy: float64 golden run", "backtrace in the log"}},
      {"huge_alloc", "eager_1st_run_OOM", {"can't allocate memory"}},
      {"truncated", "model_fail_to_load", {"cannot load", "truncated/eval.pt"}},
      {"sha_mismatch", "model_fail_to_load", {"sha_mismatch/inputs.pt", "sha256"}},
      {"bad_json", "model_fail_to_load", {"bad_json/manifest.json", "not valid JSON"}},
      // A path that cannot be resolved is a file that cannot be loaded (it read as
      // eager_1st_run_fail: the error escaped as the eager run's).
      {"link_loop", "model_fail_to_load", {"link_loop/eval.pt"}},
  };
}

// zoobench compare --expected on a run's accuracy rows `csv` (`rows`): a regression, expected
// failures, a model the file names but the rows lack, and one the rows have but the file lacks.
void expect_compare_gates_on(const std::vector<Row>& rows, const std::string& csv,
                             zt::ScratchDir& dir) {
  // compare: expecting `pass` of a model that fails now is a regression (exit 1) ...
  std::string all_as_now = "name,accuracy\n", raiser_expected_to_pass = "name,accuracy\n";
  for (const auto& row : rows) {
    all_as_now += row.at("name") + "," + row.at("accuracy") + "\n";
    raiser_expected_to_pass +=
        row.at("name") + "," + (row.at("name") == "raiser" ? "pass" : row.at("accuracy")) + "\n";
  }
  write_text(dir.file("expected_regressed.csv"), raiser_expected_to_pass);
  auto regressed = zt::run_command(zoobench_command("compare " + quote(csv) + " --expected " +
                                                    quote(dir.file("expected_regressed.csv"))));
  EXPECT_EQ(regressed.exit_code, 1) << regressed.output;
  EXPECT_THAT(lines_with(regressed.output, "raiser"), HasSubstr("FAIL"));
  // ... expecting every failure as it is passes the gate (XFAIL) ...
  write_text(dir.file("expected_same.csv"), all_as_now);
  auto same = zt::run_command(zoobench_command("compare " + quote(csv) + " --expected " +
                                               quote(dir.file("expected_same.csv"))));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, HasSubstr("XFAIL"));
  // ... a model of the expected file with no row (another partition's) is a note, not a failure,
  // as upstream's check_accuracy.py ...
  write_text(dir.file("expected_more.csv"), all_as_now + "vanished,pass\n");
  auto missing = zt::run_command(zoobench_command("compare " + quote(csv) + " --expected " +
                                                  quote(dir.file("expected_more.csv"))));
  EXPECT_EQ(missing.exit_code, 0) << missing.output;
  EXPECT_THAT(lines_with(missing.output, "Note:"), HasSubstr("1 models of the expected file"));
  EXPECT_THAT(missing.output, HasSubstr("    vanished\n"));
  // ... and a model of the results that the file does not name is MISSING_EXPECTED (exit 1).
  write_text(dir.file("expected_less.csv"), "name,accuracy\nraiser,pass\n");
  auto unnamed = zt::run_command(zoobench_command("compare " + quote(csv) + " --expected " +
                                                  quote(dir.file("expected_less.csv"))));
  EXPECT_EQ(unnamed.exit_code, 1) << unnamed.output;
  EXPECT_THAT(unnamed.output, HasSubstr("MISSING_EXPECTED"));
}

TEST(SuiteRun, FaultyZooGivesEveryModelItsStatusAndCompareGatesOnIt) {
  zt::ScratchDir dir;
  disable_core_dumps();
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  // The crashing operators exist only through the fault_injection patch.
  write_text(suites + "/faulty.yaml",
             "zoobench:\n"
             "  patches:\n"
             "    aborter: [fault_injection]\n"
             "    segfaulter: [fault_injection]\n");
  make_zoo(zoo, suites, "faulty",
           {{"good_mlp", "mlp"},
            {"good_conv", "conv"},
            {"raiser", "raiser"},
            {"hang", "hang"},
            {"aborter", "abort"},
            {"segfaulter", "segfault"},
            {"huge_alloc", "huge_alloc"},
            {"truncated", "truncated"},
            {"sha_mismatch", "sha_mismatch"},
            {"bad_json", "bad_json"},
            {"link_loop", "link_loop"}});

  auto run = zt::run_command(zoobench_command("run --suite faulty --accuracy --timeout 20 --suites-dir " +
                                      quote(suites) + " --zoo " + quote(zoo) +
                                      " --output-directory " + quote(out)));
  // Failing models are results, each with its row; the exit status says some failed.
  ASSERT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("exit 1: 9 of 11 rows failed"));
  const std::string csv = accuracy_csv(out, "faulty");
  auto rows = read_csv(csv);
  std::map<std::string, Row> by_name;
  for (const auto& row : rows) {
    EXPECT_EQ(by_name.count(row.at("name")), 0u) << "two rows for " << row.at("name");
    by_name[row.at("name")] = row;
  }
  EXPECT_EQ(rows.size(), 11u) << run.output;

  const std::vector<FaultyExpected> expected = faulty_zoo_expectations();
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    auto it = by_name.find(e.name);
    ASSERT_NE(it, by_name.end()) << "no row for " << e.name << "\n" << run.output;
    const Row& row = it->second;
    EXPECT_EQ(row.at("accuracy"), e.status) << "reason: " << row.at("reason");
    for (const auto& part : e.reason_parts) EXPECT_THAT(row.at("reason"), HasSubstr(part));
    EXPECT_EQ(row.at("dev"), "cpu");
    EXPECT_FALSE(row.at("log").empty());
    EXPECT_TRUE(fs::is_regular_file(row.at("log"))) << row.at("log");
  }
  // The crash report in the log: the model's identity and native frames.
  for (const char* crashed : {"aborter", "segfaulter"}) {
    const std::string log = read_text(by_name[crashed]["log"]);
    EXPECT_THAT(log,
                HasSubstr(std::string("  model: ") + crashed + " (jit, inference, float32, cpu)"));
    EXPECT_THAT(log, HasSubstr("native backtrace"));
  }
  // A crash row names the patches its model ran with (here the one that crashed it).
  EXPECT_EQ(by_name["aborter"]["patches"], "fault_injection");
  EXPECT_EQ(by_name["segfaulter"]["patches"], "fault_injection");

  // The JSON twin holds the same rows.
  fs::path json_path = csv;
  json_path.replace_extension(".json");
  auto json = nlohmann::json::parse(read_text(json_path.string()));
  EXPECT_EQ(json.at("records").size(), rows.size());

  expect_compare_gates_on(rows, csv, dir);
}

// --time-budget: a job starts only while its model's check with that backend says it can end
// in the budget; the rest are named for --resume, which then does them. The slow model's check
// lasts seconds, the MLP's a fraction of one; the budget lies between them.
TEST(SuiteRun, ATimeBudgetStartsOnlyJobsWhoseChecksSayTheyFitAndResumeDoesTheRest) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  make_zoo(zoo, suites, "budget", {{"a_slow", "slow"}, {"b_quick", "mlp"}});
  const std::string common = "run --suite budget --suites-dir " + quote(suites) + " --zoo " + quote(zoo) +
                             " --output-directory " + quote(out);
  auto checks = zt::run_command(zoobench_command(common + " --accuracy"));
  ASSERT_EQ(checks.exit_code, 0) << checks.output;
  std::map<std::string, double> check_s;  // each check's child process, start to end
  for (const auto& row : read_csv(accuracy_csv(out, "budget")))
    check_s[row.at("name")] = std::stod(row.at("job_s"));
  ASSERT_EQ(check_s.size(), 2u) << checks.output;
  const double budget = check_s["a_slow"] / 2;
  ASSERT_LT(check_s["b_quick"], budget / 2) << "the premise: the MLP's check is much the shorter";

  const std::string timing = common + " --performance --resume --repeat 3 --warmup 1 --iterations-per-run 1";
  auto budgeted = zt::run_command(zoobench_command(timing + " --time-budget " + std::to_string(budget)));
  ASSERT_EQ(budgeted.exit_code, 0) << budgeted.output;
  const auto timed = read_csv(performance_csv(out, "budget"));
  EXPECT_EQ(count_names(timed), (std::map<std::string, int>{{"b_quick", 1}})) << budgeted.output;
  ASSERT_FALSE(timed.empty());
  EXPECT_GT(std::stod(timed[0].at("job_s")), 0) << "a timing's seconds, for the next budget";
  EXPECT_THAT(budgeted.output, HasSubstr("left 1 job(s) unstarted"));
  EXPECT_THAT(budgeted.output, HasSubstr("a_slow [jit, performance]"));
  EXPECT_THAT(budgeted.output, HasSubstr("--resume"));

  auto rest = zt::run_command(zoobench_command(timing));
  ASSERT_EQ(rest.exit_code, 0) << rest.output;
  EXPECT_EQ(count_names(read_csv(performance_csv(out, "budget"))),
            (std::map<std::string, int>{{"a_slow", 1}, {"b_quick", 1}}))
      << rest.output;
}

// --- SIGINT in the middle, then --resume ---------------------------------------------------

struct Interrupted {
  bool started = false, file_appeared = false, exited = false;
  int status = 0;  // waitpid's
};

// zoobench with `args` (output to `output`), sent SIGINT once `file` exists (or after 180 s),
// then given 60 s to stop (else killed).
Interrupted interrupt_once_there(const std::vector<std::string>& args, const std::string& output,
                                 const std::string& file) {
  Interrupted result;
  const pid_t pid = spawn_zoobench(args, output);
  result.started = pid > 0;
  if (!result.started) return result;
  result.file_appeared = wait_until([&] { return fs::exists(file); }, 180);
  ::kill(pid, SIGINT);
  result.exited = wait_until([&] { return ::waitpid(pid, &result.status, WNOHANG) == pid; }, 60);
  if (!result.exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &result.status, 0);
  }
  return result;
}

TEST(SuiteRun, InterruptKeepsFinishedRowsAndResumeGivesEachModelExactlyOneRow) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  fs::create_directories(suites);
  // One worker runs the models in name order: two finish; m_slow passes its accuracy check and
  // then hangs in the performance measurement, where SIGINT reaches it; two never start.
  make_zoo(zoo, suites, "good",
           {{"a_mlp", "mlp"},
            {"b_conv", "conv"},
            {"m_slow", "hang_after_20_calls"},
            {"y_mlp", "mlp"},
            {"z_mlp", "mlp_wide"}});
  std::vector<std::string> common = {
      "run",      "--suite", "good",     "--accuracy", "--performance",
      "--repeat", "3",       "--warmup", "1",          "--iterations-per-run",
      "1"};
  common.insert(common.end(), {"--suites-dir", suites, "--zoo", zoo, "--output-directory", out});
  const std::string accuracy = accuracy_csv(out, "good"),
                    performance = performance_csv(out, "good");

  auto first_args = common;
  first_args.insert(first_args.end(), {"--timeout", "300"});
  const std::string first_output = dir.file("first.out");
  // The child's own rows so far (the runner's hand-over file): m_slow's accuracy row is there.
  const std::string slow_rows = out + "/logs/m_slow.inference.jit.cpu.rows.json";
  const Interrupted first = interrupt_once_there(first_args, first_output, slow_rows);
  ASSERT_TRUE(first.started);
  const int status = first.status;
  ASSERT_TRUE(first.exited) << "zoobench did not stop within 60 s of SIGINT\n"
                            << read_text(first_output);
  EXPECT_TRUE(first.file_appeared)
      << "m_slow's accuracy row never appeared in " << slow_rows << "\n"
      << read_text(first_output);
  ASSERT_TRUE(WIFEXITED(status)) << read_text(first_output);
  EXPECT_EQ(WEXITSTATUS(status), 130) << read_text(first_output);
  EXPECT_THAT(read_text(first_output), HasSubstr("--resume"));
  // The interrupted model's process is gone with its parent.
  EXPECT_THAT(processes_mentioning(zoo), ::testing::IsEmpty());

  // Finished models keep their rows, and the interrupted one the row its child finished (its
  // check); --resume then runs only its timing, so it never gets two.
  const auto accuracy_before = read_csv(accuracy), performance_before = read_csv(performance);
  const std::map<std::string, int> finished = {{"a_mlp", 1}, {"b_conv", 1}};
  const std::map<std::string, int> checked = {{"a_mlp", 1}, {"b_conv", 1}, {"m_slow", 1}};
  EXPECT_EQ(count_names(accuracy_before), checked);
  EXPECT_EQ(count_names(performance_before), finished);

  // --resume runs only what has no row yet; m_slow's performance run now times out.
  std::string resume_command = "run";
  for (std::size_t i = 1; i < common.size(); ++i) resume_command += " " + quote(common[i]);
  auto resumed = zt::run_command(zoobench_command(resume_command + " --timeout 15 --resume"));
  ASSERT_EQ(resumed.exit_code, 1) << resumed.output;  // m_slow's timeout row
  EXPECT_THAT(resumed.output, HasSubstr("resume: a_mlp already has its rows"));
  const std::map<std::string, int> once = {
      {"a_mlp", 1}, {"b_conv", 1}, {"m_slow", 1}, {"y_mlp", 1}, {"z_mlp", 1}};
  auto accuracy_after = read_csv(accuracy), performance_after = read_csv(performance);
  EXPECT_EQ(count_names(accuracy_after), once);
  EXPECT_EQ(count_names(performance_after), once);
  // Rows written before the interruption are kept as they were.
  ASSERT_GE(accuracy_after.size(), 2u);
  EXPECT_EQ(accuracy_after[0], accuracy_before[0]);
  EXPECT_EQ(accuracy_after[1], accuracy_before[1]);
  for (const auto& row : accuracy_after) {
    EXPECT_EQ(row.at("accuracy"), "pass") << row.at("name") << ": " << row.at("reason");
  }
  for (const auto& row : performance_after) {
    EXPECT_EQ(row.at("status"), row.at("name") == "m_slow" ? "timeout" : "pass")
        << row.at("name") << ": " << row.at("reason");
  }
}

// A timeout shorter than any model's start: every row says timeout. The SIGTERM then reaches a
// child before it has reset the parent's handlers; it used to be lost there, and the child ran
// to the end and wrote passing rows.
TEST(SuiteRun, ATimeoutShorterThanAModelsStartStillWins) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  fs::create_directories(suites);
  make_zoo(zoo, suites, "tiny", {{"t_a", "mlp"}, {"t_b", "mlp_wide"}});
  auto run = zt::run_command(zoobench_command("run --suite tiny --accuracy --timeout 0.001 --suites-dir " +
                                              quote(suites) + " --zoo " + quote(zoo) +
                                              " --output-directory " + quote(out)));
  const auto rows = read_csv(accuracy_csv(out, "tiny"));
  ASSERT_EQ(rows.size(), 2u) << run.output;
  for (const auto& row : rows) EXPECT_EQ(row.at("accuracy"), "timeout") << row.at("name") << ": " << row.at("reason");
}

// A run killed outright (SIGKILL: no handler runs) takes its model processes with it, and while
// a run lives, no second run may write into its output folder.
TEST(SuiteRun, AKilledRunLeavesNoOrphanAndALiveRunLocksItsOutput) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  fs::create_directories(suites);
  make_zoo(zoo, suites, "stuck", {{"s_hang", "hang"}});
  std::vector<std::string> args = {"run", "--suite", "stuck", "--accuracy", "--suites-dir", suites,
                                   "--zoo", zoo, "--output-directory", out};
  std::string second_command = "run";
  for (std::size_t i = 1; i < args.size(); ++i) second_command += " " + quote(args[i]);
  args.insert(args.end(), {"--timeout", "300"});
  const std::string first_output = dir.file("first.out");
  pid_t pid = spawn_zoobench(args, first_output);
  ASSERT_GT(pid, 0);
  auto model_processes = [&] {
    std::vector<std::string> children;
    for (const auto& process : processes_mentioning(zoo)) {
      if (process.find("--row-out") != std::string::npos) children.push_back(process);
    }
    return children;
  };
  const bool started = wait_until([&] { return !model_processes().empty(); }, 120);

  auto second = zt::run_command(zoobench_command(second_command + " --resume"));

  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(started) << "the model process never started\n" << read_text(first_output);
  EXPECT_EQ(second.exit_code, 2) << second.output;
  EXPECT_THAT(second.output, HasSubstr("another zoobench run (pid " + std::to_string(pid) + ")"));
  const bool orphans_gone = wait_until([&] { return model_processes().empty(); }, 20);
  EXPECT_TRUE(orphans_gone) << ::testing::PrintToString(model_processes());

  // The lock went with the run: a resumed run starts, and the model gets its one row.
  auto resumed = zt::run_command(zoobench_command(second_command + " --resume --timeout 5"));
  EXPECT_EQ(resumed.exit_code, 1) << resumed.output;  // its row: a timeout
  const auto rows = read_csv(accuracy_csv(out, "stuck"));
  ASSERT_EQ(rows.size(), 1u) << resumed.output;
  EXPECT_EQ(rows[0].at("accuracy"), "timeout");
}

// --- partitions and merge ------------------------------------------------------------------

TEST(SuiteRun, PartitionsCoverEachModelOnceAndMergeEqualsAnUnpartitionedRun) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  fs::create_directories(suites);
  const Models models = {
      {"p_a", "mlp"}, {"p_b", "conv"}, {"p_c", "mlp_wide"}, {"p_d", "mlp"}, {"p_e", "raiser"}};
  make_zoo(zoo, suites, "parts", models);
  const std::string base = "run --suite parts --accuracy --timeout 120 --suites-dir " +
                           quote(suites) + " --zoo " + quote(zoo);

  constexpr int kPartitions = 3;
  std::map<std::string, int> covered;
  std::string merge_inputs;
  for (int id = 0; id < kPartitions; ++id) {
    const std::string part_out = out + "/part" + std::to_string(id);
    auto run = zt::run_command(
        zoobench_command(base + " --total-partitions " + std::to_string(kPartitions) + " --partition-id " +
                 std::to_string(id) + " --output-directory " + quote(part_out)));
    auto rows = read_csv(accuracy_csv(part_out, "parts"));
    EXPECT_FALSE(rows.empty()) << "partition " << id << " of 5 models has none";
    const bool has_raiser =
        std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.at("name") == "p_e"; });
    ASSERT_EQ(run.exit_code, has_raiser ? 1 : 0) << run.output;  // p_e's eager run raises
    for (const auto& row : rows) ++covered[row.at("name")];
    merge_inputs += " " + quote(accuracy_csv(part_out, "parts"));
  }
  std::map<std::string, int> once;
  for (const auto& [name, kind] : models) once[name] = 1;
  EXPECT_EQ(covered, once);  // no gap, no overlap

  auto whole = zt::run_command(zoobench_command(base + " --output-directory " + quote(out + "/whole")));
  ASSERT_EQ(whole.exit_code, 1) << whole.output;  // p_e
  auto merged =
      zt::run_command(zoobench_command("merge" + merge_inputs + " -o " + quote(out + "/merged.csv")));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  auto whole_rows = read_csv(accuracy_csv(out + "/whole", "parts"));
  auto merged_rows = read_csv(out + "/merged.csv");
  EXPECT_EQ(names_and_statuses(merged_rows), names_and_statuses(whole_rows));
  EXPECT_EQ(whole_rows.size(), models.size());

  auto bad = zt::run_command(zoobench_command(
      base + " --total-partitions 3 --partition-id 3 --output-directory " + quote(out + "/bad")));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("--partition-id must be in [0, --total-partitions)"));
}

// --- two workers on one device ---------------------------------------------------------------

std::vector<int> allowed_cpus();

// --devices cpu,cpu: two workers on the CPU, each on its own CPUs (--cpu-affinity; without it
// the list is refused, since the two would share the CPUs: DeviceList.*).
TEST(SuiteRun, TwoWorkersOnOneDeviceGiveCompleteRows) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed: two CPU workers need two";
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  fs::create_directories(suites);
  const Models models = {{"w_a", "mlp"}, {"w_b", "conv"}, {"w_c", "mlp_wide"}, {"w_d", "mlp"}};
  make_zoo(zoo, suites, "workers", models);
  auto run = zt::run_command(zoobench_command(
      "run --suite workers --accuracy --timeout 120 --devices cpu,cpu"
      " --cpu-affinity " +
      std::to_string(cpus[0]) + "," + std::to_string(cpus[1]) + " --suites-dir " + quote(suites) +
      " --zoo " + quote(zoo) + " --output-directory " + quote(out)));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string csv = accuracy_csv(out, "workers");
  auto rows = read_csv(csv);
  std::map<std::string, int> once;
  for (const auto& [name, kind] : models) once[name] = 1;
  EXPECT_EQ(count_names(rows), once) << run.output;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("accuracy"), "pass") << row.at("name") << ": " << row.at("reason");
    EXPECT_EQ(row.at("dev"), "cpu");
    EXPECT_TRUE(fs::is_regular_file(row.at("log"))) << row.at("log");
  }
  fs::path json_path = csv;
  json_path.replace_extension(".json");
  EXPECT_EQ(nlohmann::json::parse(read_text(json_path.string())).at("records").size(),
            models.size());
}

// --jobs 2 on the demo list: two model pipelines at once (exports, loads and checks overlap), the
// same statuses as one at a time, and no two timed sections ever overlap: each held the device
// (here the CPU) alone, as the rows' timed_section intervals show, and (--pause-pipelines) paused
// the other pipeline if it was at work.
TEST(SuiteRun, TwoPipelinesGiveTheStatusesOfOneAndNeverTimeTwoModelsAtOnce) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo");
  auto run = [&](const std::string& out, const std::string& jobs) {
    return zt::run_command(zoobench_command(
        "run --suite demo -k '^(squeezenet1_1|shufflenet_v2_x1_0|text_encoder_small)$' --backend "
        "jit"
        " --devices cpu --accuracy --performance --repeat 5 --warmup 1 --timeout 600 "
        "--pause-pipelines --jobs " +
        jobs + " --zoo " + quote(zoo) + " --output-directory " + quote(out)));
  };
  const std::string one = dir.file("one"), two = dir.file("two");
  auto alone = run(one, "1");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  auto pair = run(two, "2");
  ASSERT_EQ(pair.exit_code, 0) << pair.output;
  EXPECT_THAT(pair.output, HasSubstr("pipelines: 2 model pipeline(s) per device (--jobs)"));

  const auto accuracy_one = read_csv(accuracy_csv(one, "demo")),
             accuracy_two = read_csv(accuracy_csv(two, "demo"));
  ASSERT_EQ(accuracy_one.size(), 3u) << alone.output;
  EXPECT_EQ(names_and_statuses(accuracy_two), names_and_statuses(accuracy_one)) << pair.output;
  EXPECT_EQ(names_and_statuses(read_csv(performance_csv(two, "demo")), "status"),
            names_and_statuses(read_csv(performance_csv(one, "demo")), "status"))
      << pair.output;
  const auto sections = timed_sections(performance_csv(two, "demo"));
  EXPECT_EQ(sections.size(), 3u);
  EXPECT_EQ(overlapping(sections), "");
  // Each section paused the other pipeline when it was at work, and nothing else.
  EXPECT_EQ(pause_problems(performance_csv(two, "demo"),
                           {"squeezenet1_1", "shufflenet_v2_x1_0", "text_encoder_small"}),
            "");
}

// A timing that comes out unstable while another pipeline of the run is at work is timed again
// with the others paused (--unstable-cov 0 makes every timing unstable). A process that was
// waiting for the device when a section began cannot have ended before it: such a one must be
// among those the second timing paused. The zoo is made first, so the three pipelines start
// together: the first section to begin has the two others at work beside it.
TEST(SuiteRun, AnUnstableTimingBesideOtherPipelinesIsTimedAgainWithThemPaused) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("out");
  make_zoo(zoo, suites, "retimed", {{"r_mlp", "mlp"}, {"r_wide", "mlp_wide"}, {"r_conv", "conv"}});
  auto run = zt::run_command(zoobench_command(
      "run --suite retimed --suites-dir " + quote(suites) + " --zoo " + quote(zoo) +
      " --backend jit --devices cpu --accuracy --performance --repeat 5 --warmup 1 --timeout 600"
      " --jobs 3 --unstable-cov 0 --output-directory " +
      quote(out)));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  fs::path json = performance_csv(out, "retimed");
  json.replace_extension(".json");
  const nlohmann::json results = nlohmann::json::parse(read_text(json.string()));
  ASSERT_EQ(results.at("records").size(), 3u) << run.output;
  int retimed = 0;
  for (const auto& record : results.at("records")) {
    const std::string model = record.at("cells").value("name", "");
    const auto section = record.at("detail").value("timed_section", nlohmann::json::object());
    const auto paused = section.value("paused", std::vector<std::string>{});
    EXPECT_EQ(record.at("cells").value("unstable", 0), 1) << model;
    if (section.contains("unstable_beside_others")) {
      ++retimed;
      EXPECT_FALSE(paused.empty()) << model;
      EXPECT_THAT(record.at("cells").value("reason", ""),
                  HasSubstr("timed again with the other pipelines paused"))
          << model;
      EXPECT_GT(section["unstable_beside_others"].at("speedup").get<double>(), 0) << model;
    }
    for (const auto& entry : section.value("beside", std::vector<std::string>{})) {
      const auto colon = entry.find(": ");
      if (entry.substr(colon + 2) != "performance: waiting for the device to be this model's alone")
        continue;
      EXPECT_TRUE(section.contains("unstable_beside_others")) << model << " beside " << entry;
      EXPECT_NE(std::find(paused.begin(), paused.end(), entry.substr(0, colon)), paused.end())
          << model << " beside " << entry;
    }
  }
  EXPECT_GE(retimed, 1) << run.output;
  EXPECT_EQ(pause_problems(performance_csv(out, "retimed"), {"r_mlp", "r_wide", "r_conv"}), "");
  EXPECT_THAT(run.output, HasSubstr("timed again with the other pipelines paused, unstable beside "
                                    "them: " +
                                    std::to_string(retimed)));
}

// --- CPU affinity ------------------------------------------------------------------------------

// The CPUs this test process may use, one by one (the kernel's list, zt::cpus_allowed_list).
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  std::istringstream list(zt::cpus_allowed_list());
  std::string part;
  while (std::getline(list, part, ',')) {
    const auto dash = part.find('-');
    const int first = std::stoi(part.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

// Each performance record's cpu_affinity (read by the measuring process from the kernel).
std::map<std::string, std::string> affinity_by_model(const std::string& performance_json) {
  std::map<std::string, std::string> out;
  const nlohmann::json results = nlohmann::json::parse(read_text(performance_json));  // outlives the loop
  for (const auto& record : results.at("records")) {
    out[record.at("cells").at("name").get<std::string>()] = record.at("detail").at("cpu_affinity").get<std::string>();
  }
  return out;
}

TEST(SuiteRun, CpuAffinityPinsEachWorkersProcessesToItsShare) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty()) << "no Cpus_allowed_list in /proc/self/status";
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites");
  fs::create_directories(suites);
  make_zoo(zoo, suites, "pin", {{"p_a", "mlp"}, {"p_b", "mlp"}, {"p_c", "mlp"}});
  auto run = [&](const std::string& out, const std::string& extra) {
    return zt::run_command(zoobench_command("run --suite pin --performance --repeat 3 --warmup 1 --iterations-per-run 1"
                                    " --timeout 120 --suites-dir " +
                                    quote(suites) + " --zoo " + quote(zoo) + " --output-directory " +
                                    quote(out) + " " + extra));
  };
  auto json_of = [](const std::string& out) {
    fs::path path = performance_csv(out, "pin");
    return path.replace_extension(".json").string();
  };

  // Unpinned, one model in this process: it may use every CPU the test may.
  const std::string free_out = dir.file("free");
  auto free = run(free_out, "--only p_a");
  ASSERT_EQ(free.exit_code, 0) << free.output;
  EXPECT_EQ(affinity_by_model(json_of(free_out)).at("p_a"), zt::cpus_allowed_list());

  // One worker, one CPU (the last allowed: not what an unpinned process would report).
  const std::string one = std::to_string(cpus.back());
  const std::string one_out = dir.file("one");
  auto pinned = run(one_out, "--cpu-affinity " + one);
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  const auto pinned_affinity = affinity_by_model(json_of(one_out));
  ASSERT_EQ(pinned_affinity.size(), 3u) << pinned.output;
  for (const auto& [model, affinity] : pinned_affinity) EXPECT_EQ(affinity, one) << model;
  EXPECT_THAT(read_text(one_out + "/logs/p_a.inference.jit.cpu.log"), HasSubstr("runs this model on CPUs " + one));

  // Two workers, two CPUs: each model ran on one of them, alone.
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed: the two-worker split needs two";
  const std::string a = std::to_string(cpus[0]), b = std::to_string(cpus[1]);
  const std::string two_out = dir.file("two");
  auto split = run(two_out, "--devices cpu,cpu --cpu-affinity " + a + "," + b);
  ASSERT_EQ(split.exit_code, 0) << split.output;
  const auto split_affinity = affinity_by_model(json_of(two_out));
  ASSERT_EQ(split_affinity.size(), 3u) << split.output;
  for (const auto& [model, affinity] : split_affinity) {
    EXPECT_TRUE(affinity == a || affinity == b) << model << " ran on " << affinity;
  }
}

// --accuracy-workers 2: the accuracy checks run two at a time (each on one of the two CPUs),
// all before the performance runs, which run one at a time on both CPUs; every model still
// gets exactly its two rows, and each log holds both of its children.
TEST(SuiteRun, AccuracyWorkersCheckSideBySideThenTimeAlone) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed: two accuracy workers need two";
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  fs::create_directories(suites);
  const Models models = {{"aw_a", "mlp"}, {"aw_b", "conv"}, {"aw_c", "mlp_wide"}};
  make_zoo(zoo, suites, "aworkers", models);
  const std::string a = std::to_string(cpus[0]), b = std::to_string(cpus[1]);
  const std::string both = cpus[1] == cpus[0] + 1 ? a + "-" + b : a + "," + b;
  auto run = zt::run_command(zoobench_command(
      "run --suite aworkers --accuracy --performance --accuracy-workers 2 --repeat 3 --warmup 1"
      " --iterations-per-run 1 --timeout 120 --cpu-affinity " + a + "," + b + " --suites-dir " +
      quote(suites) + " --zoo " + quote(zoo) + " --output-directory " + quote(out)));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  std::map<std::string, int> once;
  for (const auto& [name, kind] : models) once[name] = 1;
  const auto accuracy = read_csv(accuracy_csv(out, "aworkers"));
  const auto performance = read_csv(performance_csv(out, "aworkers"));
  EXPECT_EQ(count_names(accuracy), once) << run.output;
  EXPECT_EQ(count_names(performance), once) << run.output;
  for (const auto& row : accuracy) EXPECT_EQ(row.at("accuracy"), "pass") << row.at("reason");
  for (const auto& row : performance) EXPECT_EQ(row.at("status"), "pass") << row.at("reason");

  // The progress lines: every check finished before the first timing did.
  const std::string& text = run.output;
  const std::size_t first_timing = text.find(" speedup=");
  ASSERT_NE(first_timing, std::string::npos) << text;
  EXPECT_EQ(text.find(" accuracy=", first_timing), std::string::npos) << text;

  // Each model's log: its check on one CPU, then its timing on both.
  fs::path performance_json = performance_csv(out, "aworkers");
  for (const auto& [model, affinity] :
       affinity_by_model(performance_json.replace_extension(".json").string())) {
    EXPECT_EQ(affinity, both) << model;
    const std::string log = read_text(out + "/logs/" + model + ".inference.jit.cpu.log");
    const std::size_t check_line = log.find("runs this model on CPUs ");
    ASSERT_NE(check_line, std::string::npos) << log;
    const std::string check_cpus = log.substr(check_line + 24, log.find('\n', check_line) - check_line - 24);
    EXPECT_TRUE(check_cpus == a || check_cpus == b) << model << "'s check ran on " << check_cpus;
    EXPECT_THAT(log.substr(check_line + 1), HasSubstr("runs this model on CPUs " + both)) << log;
  }
}

// A check that runs out of memory beside another check may have been short of the memory the
// other held: it runs again alone, after the shared checks, and only that second attempt's row
// is kept (one row per model, its log holding both children). A check that passes beside
// another is not repeated.
TEST(SuiteRun, AccuracyWorkersRepeatAnOutOfMemoryCheckAlone) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed: two accuracy workers need two";
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites"), out = dir.file("results");
  fs::create_directories(suites);
  make_zoo(zoo, suites, "awoom", {{"oom_fits", "mlp"}, {"oom_never", "huge_alloc"}});
  const std::string a = std::to_string(cpus[0]), b = std::to_string(cpus[1]);
  auto run = zt::run_command(zoobench_command(
      "run --suite awoom --accuracy --accuracy-workers 2 --timeout 120 --cpu-affinity " + a + "," +
      b + " --suites-dir " + quote(suites) + " --zoo " + quote(zoo) + " --output-directory " +
      quote(out)));
  ASSERT_EQ(run.exit_code, 1) << run.output;  // oom_never's row

  const auto accuracy = read_csv(accuracy_csv(out, "awoom"));
  EXPECT_EQ(count_names(accuracy), (std::map<std::string, int>{{"oom_fits", 1}, {"oom_never", 1}}))
      << run.output;
  for (const auto& row : accuracy) {
    EXPECT_EQ(row.at("accuracy"), row.at("name") == "oom_never" ? "eager_1st_run_OOM" : "pass")
        << row.at("reason");
  }
  // The progress: the first attempt set aside, then counted once when it ran alone.
  EXPECT_THAT(run.output, HasSubstr("oom_never cpu accuracy=eager_1st_run_OOM"));
  EXPECT_THAT(run.output, HasSubstr("set aside, it runs again alone"));
  EXPECT_THAT(run.output, HasSubstr("[2/2]"));
  EXPECT_EQ(run.output.find("[3/"), std::string::npos) << run.output;

  auto check_lines = [&](const std::string& model) {
    const std::string log = read_text(out + "/logs/" + model + ".inference.jit.cpu.log");
    std::vector<std::string> lines;
    for (std::size_t at = log.find("runs this model on CPUs "); at != std::string::npos;
         at = log.find("runs this model on CPUs ", at + 1)) {
      lines.push_back(log.substr(at + 24, log.find('\n', at) - at - 24));
    }
    return lines;
  };
  EXPECT_EQ(check_lines("oom_fits").size(), 1u);
  // Beside the other check on one CPU, then alone on both.
  const auto again = check_lines("oom_never");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_TRUE(again[0] == a || again[0] == b) << again[0];
  EXPECT_EQ(again[1], cpus[1] == cpus[0] + 1 ? a + "-" + b : a + "," + b);
}

TEST(SuiteRunErrors, AccuracyWorkersNeedACpuEach) {
  zt::ScratchDir dir;
  const std::string zoo = dir.file("zoo"), suites = dir.file("suites");
  fs::create_directories(suites);
  make_zoo(zoo, suites, "aw_err", {{"e_a", "mlp"}});
  auto too_few = zt::run_command(zoobench_command(
      "run --suite aw_err --accuracy --accuracy-workers 3 --cpu-affinity " +
      std::to_string(allowed_cpus().front()) + " --suites-dir " + quote(suites) + " --zoo " +
      quote(zoo) + " --output-directory " + quote(dir.file("out"))));
  EXPECT_EQ(too_few.exit_code, 2) << too_few.output;
  auto zero = zt::run_command(zoobench_command("run --suite aw_err --accuracy --accuracy-workers 0"
                                               " --suites-dir " + quote(suites) + " --zoo " +
                                               quote(zoo)));
  EXPECT_EQ(zero.exit_code, 2) << zero.output;
  EXPECT_THAT(zero.output, HasSubstr("--accuracy-workers"));
}

// --- bad input: exit 2 and a message that says what to do -----------------------------------

// A zoo of manifest files only: enough for selection, which fails before anything is loaded.
std::string fake_zoo(const zt::ScratchDir& dir) {
  for (const char* name : {"good_mlp", "good_conv"}) {
    write_text(dir.file(std::string("zoo/faulty/") + name + "/manifest.json"), "{}\n");
  }
  return dir.file("zoo");
}

TEST(SuiteRunErrors, NoZooSaysHowToExportOne) {
  zt::ScratchDir dir;
  auto missing = zt::run_command(zoobench_command("run --accuracy --zoo " + quote(dir.file("nowhere"))));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("no zoo at"));
  EXPECT_THAT(missing.output, HasSubstr("tools/export_zoo.py"));
  fs::create_directories(dir.file("empty"));
  auto empty = zt::run_command(zoobench_command("run --accuracy --zoo " + quote(dir.file("empty"))));
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("has no models"));
  EXPECT_THAT(empty.output, HasSubstr("tools/export_zoo.py"));
}

TEST(SuiteRunErrors, UnknownModelSuggestsCloseNames) {
  zt::ScratchDir dir;
  fs::create_directories(dir.file("suites"));
  auto result = zt::run_command(zoobench_command("run --accuracy --suite faulty --only good_mpl --zoo " +
                                         quote(fake_zoo(dir)) + " --suites-dir " +
                                         quote(dir.file("suites"))));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output, HasSubstr("unknown model 'good_mpl'"));
  EXPECT_THAT(result.output, HasSubstr("did you mean: good_mlp"));
}

// Two runs with different --output-directory and the same --output interleaved their rows:
// the folder of an --output file elsewhere is locked as the output folder is.
TEST(SuiteRunErrors, AnOutputFileElsewhereIsLockedToo) {
  zt::ScratchDir dir;
  fs::create_directories(dir.file("suites"));
  zoobench::OutputLock live = zoobench::OutputLock::acquire(dir.file("shared"));
  auto result = zt::run_command(zoobench_command(
      "run --accuracy --suite faulty --zoo " + quote(fake_zoo(dir)) + " --suites-dir " +
      quote(dir.file("suites")) + " --output-directory " + quote(dir.file("mine")) +
      " --output " + quote(dir.file("shared/rows.csv"))));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output, HasSubstr("another zoobench run"));
  EXPECT_THAT(result.output, HasSubstr(dir.file("shared")));
}

// --resume into a file made with other settings appended this run's rows to another run's:
// refused, naming the setting, both values and what to do. The JSON twin records the settings;
// a file whose twin has none (an older one) is judged by its rows' mode, dtype and backend.
TEST(SuiteRunErrors, ResumeIntoAFileMadeWithOtherSettingsIsRefused) {
  zt::ScratchDir dir;
  fs::create_directories(dir.file("suites"));
  const std::string zoo = fake_zoo(dir), csv = dir.file("out/rows.csv"),
                    json = dir.file("out/rows.json");
  const std::string row_cells = "cpu,good_mlp,4,pass,jit,inference,";
  auto resume = [&](const std::string& flags) {
    return zt::run_command(
        zoobench_command("run --accuracy --resume --suite faulty --only good_mlp --zoo " +
                         quote(zoo) + " --suites-dir " + quote(dir.file("suites")) +
                         " --output-directory " + quote(dir.file("out")) + " --output " +
                         quote(csv) + " " + flags) +
        " 2>&1");
  };
  auto write_file = [&](const std::string& dtype, const std::string& settings) {
    write_text(csv, "dev,name,batch_size,accuracy,backend,mode,dtype\n" + row_cells + dtype + "\n");
    write_text(
        json, "{\"format\": \"zoobench-results/1\", \"kind\": \"accuracy\", \"context\": {" +
                  settings +
                  "}, \"records\": [{\"kind\": \"accuracy\", \"cells\": {\"dev\": "
                  "\"cpu\", \"name\": \"good_mlp\", \"batch_size\": \"4\", \"accuracy\": \"pass\", "
                  "\"backend\": \"jit\", \"mode\": \"inference\", \"dtype\": \"" +
                  dtype + "\"}}]}\n");
  };
  // Recorded settings: a run with --tol 0.01 resumed without it.
  write_file("float32", "\"settings\": {\"dtype\": \"float32\", \"tolerance\": 0.01}");
  auto other_tol = resume("");
  EXPECT_EQ(other_tol.exit_code, 2) << other_tol.output;
  EXPECT_THAT(other_tol.output, HasSubstr(csv + " was made with other settings than this run"));
  EXPECT_THAT(other_tol.output,
              HasSubstr("tolerance 0.01 in the file, (not given) in this run (--tol)"));
  EXPECT_THAT(other_tol.output, HasSubstr("resume with the settings it was made with"));
  // An older file without recorded settings: its rows say bfloat16, the run is float32.
  write_file("bfloat16", "");
  auto other_dtype = resume("");
  EXPECT_EQ(other_dtype.exit_code, 2) << other_dtype.output;
  EXPECT_THAT(other_dtype.output, HasSubstr("dtype 'bfloat16' in its rows, 'float32' in this run"));
  // Another backend's rows.
  auto other_backend = resume("--backend eager --bfloat16");
  EXPECT_EQ(other_backend.exit_code, 2) << other_backend.output;
  EXPECT_THAT(other_backend.output, HasSubstr("backend 'jit' in its rows, 'eager' in this run"));
  // The same settings: resumed (the model has its row; nothing runs).
  write_file("float32", "\"settings\": {\"dtype\": \"float32\", \"tolerance\": null}");
  auto same = resume("");
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, ::testing::Not(HasSubstr("other settings")));
}

TEST(SuiteRunErrors, UnknownFlagIsNamed) {
  auto result = zt::run_command(zoobench_command("run --acuracy"));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output, HasSubstr("--acuracy"));
}

// `zoobench same --tol`: NaN and negative tolerances are usage errors that name the value.
TEST(SuiteRunErrors, SameRefusesAToleranceThatIsNotAFiniteNonNegativeNumber) {
  for (const std::string bad : {"nan", "-1", "inf"}) {
    auto result = zt::run_command(zoobench_command("same ref.pt res.pt --tol " + bad));
    EXPECT_EQ(result.exit_code, 2) << bad << ": " << result.output;
    EXPECT_THAT(result.output, HasSubstr("'" + bad + "' is out of range")) << bad;
  }
}

// NaN passes every comparison: --iou-threshold nan once let a mask with IoU 0.67 pass, and
// --regression-threshold nan showed 90% regressions as none.
TEST(SuiteRunErrors, NanThresholdsAreRefused) {
  for (const std::string bad : {"nan", "inf", "1.5"}) {
    auto same = zt::run_command(
        zoobench_command("same ref.pt res.pt --iou-for-bool --iou-threshold " + bad));
    EXPECT_EQ(same.exit_code, 2) << bad << ": " << same.output;
    EXPECT_THAT(same.output, HasSubstr("'" + bad + "' is out of range")) << bad;
  }
  zt::ScratchDir dir;
  std::ofstream(dir.file("rows.csv")) << "dev,name,batch_size,accuracy\ncpu,a,1,pass\n";
  auto report = zt::run_command(
      zoobench_command("report " + quote(dir.file("rows.csv")) + " --regression-threshold nan"));
  EXPECT_EQ(report.exit_code, 2) << report.output;
  EXPECT_THAT(report.output, HasSubstr("--regression-threshold must be a fraction"));
}

TEST(SuiteRunErrors, NothingToMeasureSaysWhatToAdd) {
  zt::ScratchDir dir;
  auto result = zt::run_command(zoobench_command("run --zoo " + quote(fake_zoo(dir))));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output, HasSubstr("--accuracy and/or --performance"));
}

TEST(SuiteRunErrors, CpuAffinitySaysWhatIsWrongWithTheList) {
  zt::ScratchDir dir;
  const std::string base = "run --accuracy --zoo " + quote(fake_zoo(dir)) + " ";
  auto backwards = zt::run_command(zoobench_command(base + "--cpu-affinity 3-1"));
  EXPECT_EQ(backwards.exit_code, 2) << backwards.output;
  EXPECT_THAT(backwards.output, HasSubstr("the range 3-1 runs backwards"));
  const std::string first = std::to_string(allowed_cpus().at(0));
  auto too_few = zt::run_command(zoobench_command(base + "--devices cpu,cpu --cpu-affinity " + first));
  EXPECT_EQ(too_few.exit_code, 2) << too_few.output;
  EXPECT_THAT(too_few.output, HasSubstr("gives 1 CPU(s) to 2 workers: give each worker at least one"));
  const std::vector<int> cpus = allowed_cpus();
  const int outside = cpus.back() + 1;  // beyond every CPU this process may use
  auto not_allowed = zt::run_command(zoobench_command(base + "--cpu-affinity " + std::to_string(outside)));
  EXPECT_EQ(not_allowed.exit_code, 2) << not_allowed.output;
  EXPECT_THAT(not_allowed.output, HasSubstr("may run only on CPUs " + zt::cpus_allowed_list()));
}

TEST(SuiteRunErrors, BrokenSuiteYamlIsReportedWithFileAndLine) {
  zt::ScratchDir dir;
  // Line 4 holds a tab where yaml allows only spaces.
  write_text(dir.file("suites/faulty.yaml"),
             "zoobench:\n"
             "  patches:\n"
             "    good_mlp: [fault_injection]\n"
             "\tflaky: [good_conv]\n");
  auto result =
      zt::run_command(zoobench_command("run --accuracy --suite faulty --zoo " + quote(fake_zoo(dir)) +
                               " --suites-dir " + quote(dir.file("suites"))));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output, HasSubstr(dir.file("suites/faulty.yaml") + ":4:"));
}

}  // namespace
