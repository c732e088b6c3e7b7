// `zoobench merge RESULTS... -o FILE`: the partitions' result files combined into one CSV and its
// JSON twin, losslessly (every row and column, JSON detail where the inputs have it); the
// upstream-format twin of a zoobench file read beside it is left out (report/upstream_twins.h).
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "zoobench/report/merge.h"
#include "zoobench/report/upstream_twins.h"
#include "zoobench/results/result_files.h"
#include "zoobench/results/sink.h"
#include "zoobench/util/log.h"
#include "zoobench/util/output_guard.h"

namespace zoobench::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> results;
  std::string output;
};

int run_merge(const MergeArgs& args) {
  const std::vector<std::string> paths = expand_result_paths(args.results);
  for (const char* extension : {".csv", ".json"}) {
    std::filesystem::path written = args.output;
    refuse_output_over_inputs(written.replace_extension(extension).string(), paths, "-o");
  }
  std::vector<ResultFile> loaded;
  for (const auto& path : paths) {
    // Before the merged JSON is written: nlohmann's dump recurses once per level.
    check_result_json_depth(path);
    loaded.push_back(load_result_file(path));
  }
  // Each model once: the upstream-format twin of a zoobench file read beside it is left out.
  report::TwinSelection selection = report::leave_out_upstream_twins(std::move(loaded));
  for (const auto& note : selection.notes) log::info("merge: {}", note);
  std::vector<ResultFile> inputs = std::move(selection.files);
  int without_detail = 0;
  for (const auto& input : inputs) {
    if (!input.with_detail) ++without_detail;
  }
  report::MergedResults merged = report::merge_results(inputs);
  report::write_merged_results(merged, args.output);
  std::filesystem::path csv = args.output, json = args.output;
  csv.replace_extension(".csv");
  json.replace_extension(".json");
  std::cout << "merged " << merged.rows.size() << " " << experiment_name(merged.kind)
            << " rows from " << inputs.size() << " files into " << csv.string() << " and "
            << json.string() << "\n";
  if (without_detail > 0) {
    std::cout << without_detail
              << " input(s) had no JSON twin: their rows carry no per-tensor/sample "
              << "detail in the merged JSON\n";
  }
  return kExitOk;
}

void setup_merge(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* command =
      app.add_subcommand("merge", "Combine partitions' result files into one, losslessly");
  command
      ->add_option("results", args->results,
                   "result CSV/JSON files of one kind, or folders of them")
      ->required();
  command->add_option("-o,--output", args->output, "the merged CSV (its JSON twin goes beside it)")
      ->required();
  command->callback([args, &exit_status] { exit_status = run_merge(*args); });
}

}  // namespace

ZOOBENCH_COMMAND(merge, setup_merge);

}  // namespace zoobench::cli
