// A model's recipe exported by the model's own process. When every backend of a run is of the
// torch.compile family, a zoo entry is the model's recipe and inputs (no TorchScript), and the
// process that runs the model makes it (tools/zoo_export/in_process.py), with the exporter's own
// code, keeping the module it built for the run: one Python start and one build per model and
// batch size, none in a separate exporter process. The parent lets each such process export
// (--export-here) instead of exporting ahead of the workers (zoo_supply.h).
#pragma once

#include <string>

#include "zoobench/runner/zoo_supply.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/export_request.h"

namespace zoobench {

// Whether the model processes of a run with this request export what they need themselves:
// the recipe alone, nothing traced or packaged.
bool exports_in_model_process(const ExportRequest& request);

// Exports `entry`'s recipe into request.zoo_dir unless the entry there already serves `request`,
// holding this process's device gate shared meanwhile. Ready (with the export's seconds and
// `log`, this process's log, when it exported), or not ready with the exporter's reason.
ModelSupply export_recipe_here(const ExportRequest& request, const ZooEntry& entry,
                               const std::string& log);

}  // namespace zoobench
