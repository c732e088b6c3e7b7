// The in-process recipe export through the embedded Python.
#include "zoobench/runner/recipe_export.h"

#include <chrono>

#include "zoobench/python/embedded_python.h"
#include "zoobench/util/crash_report.h"
#include "zoobench/util/device_gate.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/log.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

namespace {

// The suite as this process reads it, handed to the exporter (which would otherwise start
// zoobench to ask); null for a suite without files (a model exported into `custom`).
nlohmann::json suite_reading(const ExportRequest& request, const std::string& suite) {
  const SuiteFiles files = find_suite_files(request.suites_dir, suite);
  if (files.list.empty() && files.yaml.empty()) return nullptr;
  return read_suite_for_exporter(request.suites_dir, suite);
}

}  // namespace

bool exports_in_model_process(const ExportRequest& request) {
  return request.roles == std::vector<std::string>{kRecipeRole};
}

ModelSupply export_recipe_here(const ExportRequest& request, const ZooEntry& entry,
                               const std::string& log) {
  const auto missing = missing_for(entry.manifest_path, request);
  if (!missing) return ModelSupply{true, "", ""};
  log::info("export {}: {}; exporting its recipe in this process", entry.name, *missing);
  nlohmann::json config = {
      {"zoo", request.zoo_dir},
      {"suites_dir", request.suites_dir},
      {"suite", entry.suite},
      {"name", entry.name},
      {"device", request.device_type},
      {"training", request.training},
      {"batch_size", request.batch_size ? nlohmann::json(*request.batch_size) : nlohmann::json()},
      {"accuracy_batch", request.accuracy_batch},
      {"torchbench_dir",
       request.torchbench_dir.empty() ? nlohmann::json() : nlohmann::json(request.torchbench_dir)}};
  crash_report::PhaseScope phase("exporting the model's recipe");
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  try {
    // The build runs on the device: never beside another pipeline's timed section.
    config["suite_reading"] = suite_reading(request, entry.suite);
    DeviceGate::Shared on_device(process_device_gate());
    const nlohmann::json outcome =
        python::call_json("zoo_export.in_process", "export_recipe", config);
    if (outcome.value("status", "") == "exported") return ModelSupply{true, "", log, seconds()};
    return ModelSupply{false, outcome.value("reason", "the exporter gave no reason"), log,
                       seconds()};
  } catch (const std::exception& e) {
    return ModelSupply{false, first_line(e.what()), log, seconds()};
  }
}

}  // namespace zoobench
