// Inductor's own compiler bisector (torch._inductor.compiler_bisector) for `zoobench bisect`
// with an Inductor backend (inductor, inductor:MODE): the first backend stage where a failing
// model fails (eager, aot_eager, aot_eager_decomp_partition, ..., inductor), the subsystem of
// that stage (lowerings, post_grad_passes, decomposition, a config change, ...), the number of
// the application that breaks it and its debug info (the FX node, the pass).
//
// The bisector is Python. Its driver (tools/zoo_compile/compiler_bisect.py) runs in a child
// process with the exporter Python, calls CompilerBisector.do_bisect with a check that runs the
// model's accuracy check as a bisect step's `zoobench run` child, and ends with one result line
// (kCompilerBisectorResultPrefix + JSON) that this side parses. Where that torch has no
// compiler bisector (Debian's 1.13; early versions with another interface count as none), the
// report says so: the config switches (inductor_switches) are what was bisected.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/bisect/check_outcome.h"

namespace zoobench {

// Whether `backend` (a --backend name) compiles with Inductor through torch.compile: inductor,
// inductor:MODE, compile:inductor[:MODE]. Other dynamo backends have no Inductor to bisect.
bool uses_inductor(const std::string& backend);

// One accuracy check the bisector asked for.
struct CompilerBisectorCheck : CheckOutcome {
  std::string backend;    // the bisector's backend stage: eager, aot_eager, ..., inductor
  std::string subsystem;  // "" while it searches the stages
  std::string run_state;  // test_disable, find_max_bounds or bisect ("" for a stage)
  // bisect: the range searched; find_max_bounds: [0, the last application's number].
  std::optional<std::pair<int64_t, int64_t>> range;
  // What the child ran: compile:eager, compile:aot_eager, ..., the user's inductor[:MODE].
  std::string zoobench_backend;
};

enum class CompilerBisectorStatus {
  kNotApplicable,  // the backend is not an Inductor one
  kNotRun,         // `note`: the model passes, --no-compiler-bisector, its eager side failed
  kNotAvailable,   // the exporter Python's torch has no (usable) compiler bisector
  kFound,          // the first failing stage, and where the bisector got further, its subsystem
  kNoIssueFound,   // every stage passed under the bisector: the failure did not reproduce
  kError,          // the bisector stopped or its driver gave no result (`note`)
};
// "not_applicable", "not_run", "not_available", "found", "no_issue_found", "error".
std::string compiler_bisector_status_name(CompilerBisectorStatus status);

struct CompilerBisectorReport {
  CompilerBisectorStatus status = CompilerBisectorStatus::kNotApplicable;
  std::string note;
  std::string torch_version;  // the driver's torch ("" when it did not run)
  // kFound, as BisectionResult has them: the stage, and where known the subsystem, the number
  // of its application that breaks the model (0 for a config change), and the debug info.
  std::string backend, subsystem, debug_info;
  std::optional<int64_t> bisect_number;
  std::string config_change;  // "inductor.layout_optimization=False" for a config change
  std::vector<CompilerBisectorCheck> checks;  // in the order they ran
  std::string log;                            // the driver's own log
};

// What the driver's result line starts with (compiler_bisect.py's RESULT_PREFIX).
extern const char* const kCompilerBisectorResultPrefix;

// The report in the driver's output: its last result line (the lines before it are progress).
// kError with a note when there is none or it does not parse.
CompilerBisectorReport parse_compiler_bisector_output(const std::string& output);

struct CompilerBisectorRequest {
  // The child of one check: argv[0] the zoobench binary, then a bisect step's `zoobench run`
  // arguments with the driver's slots "{backend}", "{rows}" and "{log}" in place of the backend,
  // the rows file and the log file; and what its environment adds (a pinned GPU).
  std::vector<std::string> child_argv;
  std::vector<std::string> child_environment;
  std::string inductor_backend;  // the user's backend, for the inductor stage
  double timeout_s = 0;          // per check; 0: none
  std::string work_dir;          // the driver's config and log, each check's log
  std::string python;            // the exporter Python (ZOOBENCH_PYTHON)
  std::string tools_dir;         // where zoo_compile is
};

// Runs the driver to its end. nullopt when `interrupted` stopped it.
std::optional<CompilerBisectorReport> run_compiler_bisector(const CompilerBisectorRequest& request,
                                                            const std::atomic<bool>& interrupted);

// A few lines for bisect's report ("" for kNotApplicable): the verdict, then each check.
std::string format_compiler_bisector(const CompilerBisectorReport& report);
// Short, for the --from-results table: "inductor lowerings #2 (relu)", "not available".
std::string compiler_bisector_summary(const CompilerBisectorReport& report);
nlohmann::json compiler_bisector_json(const CompilerBisectorReport& report);

}  // namespace zoobench
