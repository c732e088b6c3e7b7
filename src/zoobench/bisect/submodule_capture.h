// What each direct child of one submodule of a model receives and returns when the model runs
// as the eager reference runs it, and each such child written out as a model of its own, in
// the zoo format (a repro): its TorchScript file, the inputs it received, its manifest (which
// carries the model's patches), and its float32 and float64 outputs from the whole model's run.
// `zoobench bisect` checks these one by one to find the first submodule that fails by itself
// (bisect/divergence.h); a check is an ordinary `zoobench run` of the repro folder.
//
// How the calls are seen: the parent's TorchScript methods get a recording operator before and
// after each call of a child's forward (graph edits of the loaded copy only), and the model runs
// with the graph executor's optimizations off, as the eager reference does.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/script.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zoobench/runner/run_options.h"

namespace zoobench {

// One child's first call during the run (a child called twice, like a shared embedding, keeps
// its first call; `calls` says how many there were).
struct ChildCall {
  std::string name;  // its path from the parent ("attention", or "layer.3" through a ModuleList)
  std::string type;  // its class, without TorchScript's module prefix
  std::vector<c10::IValue> inputs;
  c10::IValue output;
  int calls = 0;
};

// The submodule at a dotted path ("" is the module itself); throws std::invalid_argument
// naming the first missing part.
torch::jit::Module submodule_at(const torch::jit::Module& root, const std::string& path);

// Runs `root.forward(inputs)` once (no grad, graph optimizations off) and returns the calls that
// the submodule at `parent_path` makes of its submodules, in the order of their first calls: its
// children, and the items of its containers (a ModuleList has no forward of its own).
// Edits the graphs of the parent's type (loaded copies only).
std::vector<ChildCall> capture_child_calls(torch::jit::Module& root, const std::string& parent_path,
                                           const std::vector<c10::IValue>& inputs);

// `zoobench bisect --capture-children PATH --capture-into DIR` (the child process a bisect runs
// for each level): loads the model of `options` (suite, only[0], devices[0], precision), saves
// the submodules PATH calls, applies the model's patches as the eager reference does, captures one run in
// float32 and one in float64, and writes DIR/zoo/<suite>/<model>@<child path>/ for each child
// called with tensors only, and DIR/level.json: every called child in call order, with its
// folder or why it has none. Returns the exit status (0, or 2 for bad input).
int execute_submodule_capture(const RunOptions& options, const std::string& parent_path,
                              const std::string& into);

// The repro model's name for a submodule of `model`: "<model>@<path>".
std::string submodule_model_name(const std::string& model, const std::string& path);

}  // namespace zoobench
