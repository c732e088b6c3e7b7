#include "targets.h"

#include <caffe2/serialize/inline_container.h>

#include <filesystem>
#include <sstream>

#include "zoobench/results/result_files.h"
#include "zoobench/serialization/torch_save.h"
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

void read_suite_yaml(const std::string& path) {
  SuiteConfig::load(path, std::filesystem::path(path).stem().string());
}

void read_results(const std::string& path) { load_result_file(path); }

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
