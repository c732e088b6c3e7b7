#include "targets.h"

#include <caffe2/serialize/inline_container.h>

#include <filesystem>
#include <sstream>

#include "zoobench/results/result_files.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/files.h"
#include "zoobench/util/json_flag.h"
#include "zoobench/util/name_pattern.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/export_request.h"
#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench::fuzz {
namespace {

std::string byte_mutant(const std::string& seed, const std::vector<std::string>& corpus,
                        Mutator& mutator) {
  return mutator.mutate(seed, corpus);
}

// A torch.save file is a zip: mutated bytes mostly break its checksums and test only the zip
// reader. Three mutants in four keep the zip whole and mutate the pickle program inside it (the
// part zoobench parses itself); the fourth mutates the archive's bytes.
std::string torch_save_mutant(const std::string& seed, const std::vector<std::string>& corpus,
                              Mutator& mutator) {
  if (mutator.below(4) == 0) return mutator.mutate(seed, corpus);
  std::istringstream in(seed);
  caffe2::serialize::PyTorchStreamReader reader(&in);
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) -> size_t {
    out.append(static_cast<const char*>(data), size);
    return size;
  });
  for (const std::string& name : reader.getAllRecords()) {
    auto [bytes, size] = reader.getRecord(name);
    std::string record(static_cast<const char*>(bytes.get()), size);
    if (name == "data.pkl") record = mutator.mutate(record, corpus);
    writer.writeRecord(name, record.data(), record.size());
  }
  writer.writeEndOfFile();
  return out;
}

// As a run reads it, then as `zoobench suite-config` hands it to the exporter.
void read_suite_yaml(const std::string& path) {
  SuiteConfig::load(path, std::filesystem::path(path).stem().string())
      .exporter_view()
      .dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void read_results(const std::string& path) { load_result_file(path); }

// The zoo's index.json, as a run reads it: the catalog's export failures, then one model's
// record (both pass over a damaged index: it is informational).
void read_zoo_index(const std::string& path) {
  const std::string zoo = std::filesystem::path(path).parent_path().string();
  ZooCatalog::scan_or_empty(zoo);
  export_record(zoo, "timm_models", "resnet18");
}

// A -k/-x pattern (the file's bytes), compiled and matched as selection does, against names as
// long as the zoo's and a long run of one letter (where a backtracking matcher would not end).
void match_name_pattern(const std::string& path) {
  const NamePattern pattern(read_text_file(path), "--filter");
  for (const char* name : {"resnet18", "BertForMaskedLM", "hf_T5_generate", ""})
    pattern.found_in(name);
  pattern.found_in(std::string(64, 'a') + "!");
}

// --compile-options (the file's bytes), parsed and dumped as the run does.
void parse_compile_options(const std::string& path) {
  parse_json_object_flag("--compile-options", read_text_file(path), 16, "a flat mapping", "e.g. {}")
      .dump();
}

}  // namespace

const std::vector<Target>& all_targets() {
  static const std::vector<Target> targets = {
      {"torch_save", "torch.save files (zoobench same, inputs.pt, outputs)", "mutant.pt",
       [](const std::string& path) { serialization::load_torch_save(path); }, torch_save_mutant},
      {"manifest", "zoo manifests (manifest.json)", "manifest.json",
       [](const std::string& path) { read_manifest(path); }, byte_mutant},
      {"suite_yaml", "suite configurations (suites/<suite>.yaml)", "fuzzed.yaml", read_suite_yaml,
       byte_mutant},
      {"results_csv", "result CSVs (report, compare, merge, --resume)",
       "fuzzed_jit_inference_float32_cpu_accuracy.csv", read_results, byte_mutant},
      {"results_json", "result JSON files (report, compare, merge)",
       "fuzzed_jit_inference_float32_cpu_accuracy.json", read_results, byte_mutant},
      {"zoo_index", "a zoo's index.json (the exporter's record of each model)", "index.json",
       read_zoo_index, byte_mutant},
      {"model_list", "suite model lists (suites/<suite>_models_list.txt)", "fuzzed_models_list.txt",
       [](const std::string& path) { read_model_list(path); }, byte_mutant},
      {"name_pattern", "-k/--filter and -x/--exclude patterns", "pattern.txt", match_name_pattern,
       byte_mutant, "--filter"},
      {"compile_options", "--compile-options JSON", "options.json", parse_compile_options,
       byte_mutant, "--compile-options"},
  };
  return targets;
}

const Target* find_target(const std::string& name) {
  for (const Target& target : all_targets()) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

}  // namespace zoobench::fuzz
