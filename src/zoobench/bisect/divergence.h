// Where a failing model first goes wrong: the smallest submodule that fails by itself.
//
// Each level of the module hierarchy is searched in the order the model calls its children:
// every child is run alone through the failing backend, on exactly the inputs it received in
// the eager reference's run of the whole model (so its inputs never crossed the tolerance),
// and judged by the accuracy engine against its own float64 run, with the model's tolerance.
// The first child that fails becomes the next level; the search ends at a child none of whose
// children fails alone. Compiling each child alone rather than comparing the intermediate
// values of one compiled run is deliberate: a recording operator inside the compiled graph
// would block the very fusions and folds that may be at fault. The price: a fault that needs
// two children together (a fusion across them) shows as their parent, and the report says so.
//
// The search sees the model only through `CaptureLevel` and `CheckSubmodule` (bisect_run.cpp
// runs each in a child process; tests run fakes).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zoobench/bisect/check_outcome.h"

namespace zoobench {

// A child as the capture wrote it: a model of its own (a repro folder), or why it has none.
struct SubmoduleCandidate {
  std::string path;    // "model.longformer.encoder.layer.0"
  std::string type;    // its class
  std::string model;   // the repro's model name ("<model>@<path>")
  std::string folder;  // the repro's folder
  std::string skipped; // why it could not be written out ("" when it was)
  int calls = 0;
};

// One child's accuracy check, from its row.
struct SubmoduleCheck : CheckOutcome {
  SubmoduleCandidate candidate;
  std::string rmse_res, rmse_ref;
  // The compiled side failed (fail_accuracy, fail_to_run, crash, timeout, OOM): a statement
  // about the backend. A child whose eager side or files failed says nothing about it.
  bool compiled_side_failed() const;
};

enum class DivergenceVerdict {
  kFound,              // `path` fails alone; none of its children does
  kNoChildFailsAlone,  // the model fails, none of its children alone
  kNotSearched,        // `note` says why (a backend without intermediates, training, ...)
};
std::string divergence_verdict_name(DivergenceVerdict verdict);

struct DivergenceReport {
  DivergenceVerdict verdict = DivergenceVerdict::kNotSearched;
  std::string path;    // kFound: the smallest submodule that fails alone
  std::string repro;   // kFound: its folder
  // kFound: the `zoobench run` that reproduces it and the `zoobench same` that gives the verdict
  // from its saved outputs, a line each (set by the caller).
  std::string repro_command;
  std::string note;
  std::vector<std::string> levels;      // the parents searched, outermost first ("" the model)
  std::vector<SubmoduleCheck> checks;   // in the order they ran
};

// The children of a parent ("" the model), in the order of their first calls. Throws
// std::runtime_error when the capture itself fails.
using CaptureLevel = std::function<std::vector<SubmoduleCandidate>(const std::string& parent)>;
using CheckSubmodule = std::function<SubmoduleCheck(const SubmoduleCandidate&)>;

DivergenceReport find_first_divergence(const CaptureLevel& capture, const CheckSubmodule& check,
                                       int max_depth = 64);

// A few lines: the verdict, the submodule and its figures, the repro; one line per check.
std::string format_divergence(const DivergenceReport& report);
nlohmann::json divergence_json(const DivergenceReport& report);

}  // namespace zoobench
