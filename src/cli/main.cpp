// zoobench's command line: one subcommand per file (cmd_*.cpp); this file only dispatches.
#include <CLI/CLI.hpp>

#include <iostream>

#include "zoobench/util/compat.h"

int main(int argc, char** argv) {
  CLI::App app{"zoobench: run a model zoo through eager and compiled LibTorch backends"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "zoobench 0.1 (torch " + zoobench::compat::torch_version() + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return 0;
}
