// How a subcommand plugs into the CLI: each cmd_<name>.cpp defines a setup function that adds
// its CLI11 subcommand (options and callback) and registers it with ZOOBENCH_COMMAND, so adding
// a subcommand touches no other file. A callback returns the process exit status.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace zoobench::cli {

// Exit statuses shared by every subcommand.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // the command ran and its verdict is negative (e.g. `same` differs)
constexpr int kExitUsage = 2;   // bad flags or input files: the message says what to fix

// Adds the subcommand to `app`; the returned pointer's callback must set `exit_status`.
using CommandSetup = std::function<void(CLI::App& app, int& exit_status)>;

struct CommandRegistration {
  std::string name;
  CommandSetup setup;
};

std::vector<CommandRegistration>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(setup)});
  }
};

}  // namespace zoobench::cli

#define ZOOBENCH_COMMAND(name, setup) \
  static ::zoobench::cli::CommandRegistrar zoobench_command_registrar_##name(#name, setup)
