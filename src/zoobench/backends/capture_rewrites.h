// Graph rewrites that take host reads out of traced models, so a CUDA graph can hold them
// (issue 18: the jit and cudagraphs backends fell back to uncaptured runs on tf_efficientnet_b0,
// AllenaiLongformerBase and others). Each rewrite computes exactly what the graph computed
// before; only where or when the work happens changes. They are switches of the capturing
// backends (`host_size_arithmetic`, `mask_fill_index_put`, `constant_copies`), so `zoobench
// bisect` can turn each off.
#pragma once

#include <torch/script.h>

#include <memory>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"

namespace zoobench {

// Tracing records a model's size arithmetic (timm's "same" padding: ceil(ih / s), floor
// divisions) as tensor ops on prim::NumToTensor values, and the tensor constants those ops meet
// as constants on the tracing device. A 0-dim CUDA constant in that arithmetic moves the result
// to the device, and the int() that follows waits for it. This replaces each such constant, in
// the uses that lead only to a number conversion (aten::Int, aten::Float, ...), by a CPU copy
// of the same value: the arithmetic stays on the host. Returns the number of uses changed.
int keep_size_arithmetic_on_host(torch::jit::Graph& graph);

// index_put_(self, [mask], value) with one boolean mask of self's shape and a 0-dim value (what
// `t[mask] = v` traces to, as in Longformer's attention mask) finds the mask's true positions
// with nonzero, a host read; masked_fill_(self, mask, value) writes the same elements without
// it. Returns the number of nodes rewritten.
int index_put_masks_to_masked_fill(torch::jit::Graph& graph);

// Tracing records a tensor the model makes from Python numbers on each call (transformers'
// masking_utils: the 0.0 beside the attention mask) as a CPU constant, and its `.to(device)` as a
// copy on every call. From pageable memory that copy waits for the device, so no CUDA graph can
// hold the model: BartForCausalLM, GPTNeoForSequenceClassification, MobileBertForMaskedLM and
// RobertaForQuestionAnswering fell back so on the H200 (2026-12-02g; jit's freezing folds the
// copy already). This folds each aten::to of a CPU tensor constant with constant arguments into
// a constant of its result, made once here (on the device), where nothing writes to the result or
// to what may alias it and it is no output of the graph (a shared constant must stay as it was).
// Returns the number of copies folded.
int fold_constant_copies(const std::shared_ptr<torch::jit::Graph>& graph);

// Which rewrites apply_capture_rewrites makes (the backends' switches of the same names).
struct CaptureRewriteSwitches {
  bool host_size_arithmetic = false;
  bool mask_fill_index_put = false;
  bool constant_copies = false;
};

// The rewrites switched on, on every method graph of `module` and its submodules (each graph
// once); returns the counts.
struct CaptureRewriteCounts {
  int host_constants = 0;
  int masked_fills = 0;
  int folded_copies = 0;
};
CaptureRewriteCounts apply_capture_rewrites(torch::jit::Module& module, const CaptureRewriteSwitches& on);

// The rewrites as switches of a capturing backend (jit, cudagraphs).
std::vector<OptimizationSwitch> capture_rewrite_switches();

// Applies the rewrites the request switches on, when it captures CUDA graphs (on CUDA, with
// cudagraphs on and its `cudagraphs` switch on); logs what changed for `model`.
void rewrite_for_capture(torch::jit::Module& module, const BackendRequest& request,
                         const std::string& model);

}  // namespace zoobench
