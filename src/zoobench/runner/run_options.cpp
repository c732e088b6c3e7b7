// Output naming.
#include "zoobench/runner/run_options.h"

#include <filesystem>

#include "zoobench/backends/backend.h"
#include "zoobench/results/rows.h"

namespace zoobench {

std::string result_csv_path(const RunOptions& options, const std::string& experiment,
                            const std::string& device) {
  const bool both = options.accuracy && options.performance;
  if (!options.output.empty()) {
    std::filesystem::path path(options.output);
    if (path.is_relative() && !options.output_directory.empty() && !path.has_parent_path()) {
      path = std::filesystem::path(options.output_directory) / path;
    }
    if (!both) return path.string();
    std::string extension = path.has_extension() ? path.extension().string() : ".csv";
    return (path.parent_path() / (path.stem().string() + "_" + experiment + extension)).string();
  }
  std::string device_part = device;
  for (char& c : device_part) {
    if (c == ':') c = '_';
  }
  std::string name = options.suite + "_" + backend_file_part(options.backend) + "_" + mode_name(options.mode) + "_" +
                     precision_name(options.precision) + "_" + device_part + "_" + experiment + ".csv";
  return (std::filesystem::path(options.output_directory) / name).string();
}

std::vector<std::string> accuracy_layouts(const RunOptions& options) {
  return options.input_layouts.empty() ? std::vector<std::string>{kDefaultInputLayout} : options.input_layouts;
}

std::string backend_file_part(const std::string& backend) {
  std::string out = backend;
  for (char& c : out) {
    if (c == ':') c = '-';
  }
  return out;
}

std::string eager_reference(const RunOptions& options) {
  if (options.eager_reference != "auto") return options.eager_reference;
  return resolve_eager_reference(options.backends);
}

}  // namespace zoobench
