// Hand-built result rows for the report tests: a few cells, the rest left empty as a run that
// did not measure them would.
#pragma once

#include <map>
#include <string>

#include "zoobench/results/rows.h"

namespace zoobench::report::testing {

inline ResultRow accuracy_row(const std::string& dev, const std::string& name,
                              const std::string& status,
                              std::map<std::string, std::string> extra = {}) {
  ResultRow row;
  row.kind = ExperimentKind::kAccuracy;
  row.cells = {{"dev", dev},       {"name", name},        {"batch_size", "4"}, {"accuracy", status},
               {"backend", "jit"}, {"mode", "inference"}, {"dtype", "float32"}};
  for (auto& [column, value] : extra) row.cells[column] = value;
  return row;
}

inline ResultRow performance_row(const std::string& dev, const std::string& name,
                                 const std::string& backend, double eager_ms, double compiled_ms,
                                 std::map<std::string, std::string> extra = {}) {
  ResultRow row;
  row.kind = ExperimentKind::kPerformance;
  row.cells = {{"dev", dev},
               {"name", name},
               {"batch_size", "4"},
               {"backend", backend},
               {"mode", "inference"},
               {"dtype", "float32"},
               {"status", "pass"},
               {"eager_reference", "torchscript"},
               {"eager_latency", format_cell(eager_ms)},
               {"abs_latency", format_cell(compiled_ms)},
               {"speedup", format_cell(eager_ms / compiled_ms)}};
  for (auto& [column, value] : extra) row.cells[column] = value;
  return row;
}

}  // namespace zoobench::report::testing
