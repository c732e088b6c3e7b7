// One model's plan: everything its run takes from the suite configuration, its manifest and the
// flags (batch size, artifacts, patches, tolerance rule, switches off, loss scale, check runs),
// resolved once before anything runs, passed down as one value and printed at the top of the
// model's log, so that a row can be explained from the log alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"
#include "zoobench/zoo/catalog.h"
#include "zoobench/zoo/manifest.h"
#include "zoobench/zoo/suite_config.h"

namespace zoobench {

struct ModelPlan {
  std::string model;
  std::string backend;
  std::string device;  // as given: cpu, cuda, cuda:1
  Mode mode = Mode::kInference;
  Precision precision = Precision::kFloat32;
  int64_t batch_size = 0;                 // the zoo entry's (--batch-size chose the entry)
  std::vector<std::string> artifacts;     // roles the eager reference and the backend load
  std::vector<std::string> patches;       // applied, in order (none with --no-patches)
  std::vector<std::string> switches_off;  // --disable-switches and the suite's, for this backend
  std::string suite_switches_reason;      // why the suite turns some off ("" when it does not)
  ToleranceDecision tolerance;            // the comparison rule and where it came from
  bool non_deterministic = false;         // eager runs may differ (upstream's non_deterministic)
  int check_runs = 1;                     // compiled runs the verdict votes over
  double loss_scale = 1.0;                // training: extra factor on the loss
  // On CUDA, compiled runs inside CUDA graphs: off with --disable-cudagraphs, and for the
  // models of the suite's disable_cudagraph list (all backends but `cudagraphs` itself).
  bool cudagraphs = true;
  std::string cudagraphs_off_reason;      // why not, when not
  // Set when the suite's configuration cannot be applied (a switch the backend does not
  // have): the rows then say so instead of running with the pass on.
  std::optional<std::string> invalid;
};

// The plan of `manifest`'s model with `options.backend` on `device`.
ModelPlan plan_model(const ZooEntry& entry, const Manifest& manifest, const RunOptions& options,
                     const SuiteConfig& config, const std::string& device);

// The plan as the model's log shows it: one fact a line, "plan: <fact>".
std::string describe(const ModelPlan& plan);

}  // namespace zoobench
