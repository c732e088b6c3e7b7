// One model, in this process: read its manifest, apply its patches, load its inputs, run the
// requested experiments on one device, and return one row per experiment (per input layout).
// Every failure becomes a row with the upstream status; nothing here throws for a model's fault.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "zoobench/results/rows.h"
#include "zoobench/runner/run_options.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

// `on_row` (optional) is called with each row as soon as it exists, so a process that dies in
// a later experiment has already handed over the earlier rows.
std::vector<ResultRow> run_model(const ZooEntry& entry, const RunOptions& options, const SuiteConfig& config,
                                 const std::string& device,
                                 const std::function<void(const ResultRow&)>& on_row = nullptr);

}  // namespace zoobench
