// `zoobench run`: the flags (runner/run_flags.cpp's table) -> RunOptions -> runner::execute_run.
#include <memory>

#include "cli/command.h"
#include "zoobench/runner/accuracy_batch.h"
#include "zoobench/runner/run_flags.h"

namespace zoobench::cli {
namespace {

void setup_run(CLI::App& app, int& exit_status) {
  auto flags = std::make_shared<RunFlags>();
  auto command_line = std::make_shared<std::vector<std::string>>();
  CLI::App* c = app.add_subcommand("run", "Run models through eager and compiled backends: accuracy and/or performance");
  add_run_flags(*c, *flags);
  c->callback([flags, command_line, c, &exit_status] {
    finish_run_flags(*c, *flags);
    exit_status = execute_upstream_passes(flags->options, *command_line);
  });
  // The command line is recorded with the results (run context).
  c->parse_complete_callback([command_line, c] {
    *command_line = {"zoobench", "run"};
    for (const auto* option : c->get_options()) {
      for (const auto& value : option->results()) command_line->push_back(option->get_name() + "=" + value);
    }
  });
}

}  // namespace

ZOOBENCH_COMMAND(run, setup_run);

}  // namespace zoobench::cli
