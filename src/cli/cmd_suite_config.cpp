// `zoobench suite-config SUITE`: a suite's list and yaml as zoobench reads them, as JSON. The
// exporter (tools/zoo_export/suite_config.py) reads suites through it, so that a suite file has
// one reader and the harness and the exporter cannot take different meanings from one line.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench::cli {
namespace {

int print_suite_config(const std::string& suite, const std::string& suites_dir_flag) {
  const std::string suites_dir = suites_dir_flag.empty() ? default_suites_dir() : suites_dir_flag;
  std::cout << read_suite_for_exporter(suites_dir, suite)
                   .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
  return kExitOk;
}

void setup_suite_config(CLI::App& app, int& exit_status) {
  auto suite = std::make_shared<std::string>();
  auto suites_dir = std::make_shared<std::string>();
  CLI::App* c = app.add_subcommand(
      "suite-config",
      "A suite's model list and yaml as zoobench reads them, as JSON (what the exporter reads)");
  c->add_option("suite", *suite, "the suite: <suite>_models_list.txt and/or <suite>.yaml")
      ->required();
  c->add_option("--suites-dir", *suites_dir, "folder with the suite's files");
  c->callback([suite, suites_dir, &exit_status] {
    exit_status = print_suite_config(*suite, *suites_dir);
  });
}

}  // namespace

ZOOBENCH_COMMAND(suite_config, setup_suite_config);

}  // namespace zoobench::cli
