// zoobench's command line: one subcommand per file (cmd_*.cpp); this file only dispatches and
// turns escaped errors into messages and exit statuses.
#include <iostream>

#include "cli/command.h"
#include "zoobench/util/compat.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/host_memory.h"

namespace zoobench::cli {
std::vector<CommandRegistration>& command_registry() {
  static std::vector<CommandRegistration> registry;
  return registry;
}
}  // namespace zoobench::cli

int main(int argc, char** argv) {
  using namespace zoobench::cli;
  // Before any tensor exists: every measurement in this process sees the same malloc policy.
  zoobench::keep_freed_host_memory();
  // A fatal signal leaves its phase and native frames in the log (a suite row points there).
  zoobench::crash_report::install();
  CLI::App app{"zoobench: run a model zoo through eager and compiled LibTorch backends"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "zoobench 0.1 (torch " + zoobench::compat::torch_version() + ")");
  int exit_status = kExitOk;
  for (auto& command : command_registry()) command.setup(app, exit_status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const zoobench::UsageError& e) {
    std::cerr << "zoobench: " << e.what() << "\n";
    return kExitUsage;
  } catch (...) {
    std::cerr << "zoobench: " << zoobench::current_exception_message() << "\n";
    return kExitUsage;
  }
  return exit_status;
}
