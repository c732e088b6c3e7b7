// PyTorch's accuracy rule, torch._dynamo.utils.same as of PyTorch 2.11, over IValue trees
// (tensors and nested tuples/lists/dicts of tensors and scalars), with a diagnosis of every
// compared leaf (diagnosis.h). The verdict is upstream's; where upstream would raise (a key or
// type mismatch, shapes that do not broadcast) the leaf fails with the reason, as upstream's
// benchmark harness counts such an exception as a failed accuracy check.
//
// Tensor rules, in upstream's order: dtype mismatch fails (exact_dtype); bool tensors use IoU
// (use_iou_for_bool) or allclose on uint8; cos_similarity: allclose early exit, then cosine
// similarity >= 0.99; otherwise allclose(ref, res, atol=tol, rtol=tol, equal_nan), then, when
// the fp64 reference is float64, the NaN fallback and the rmse rule with upstream's multiplier.
// Work happens where the tensors are (CPU or CUDA) in one pass, in float64 for the error sums.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "zoobench/accuracy/diagnosis.h"

namespace zoobench::accuracy {

// Upstream's keyword arguments, with upstream's defaults.
struct SameOptions {
  double tol = 1e-4;
  bool cos_similarity = false;
  bool equal_nan = false;
  bool exact_dtype = true;
  bool ignore_non_fp = false;
  bool use_larger_multiplier_for_smaller_tensor = false;
  bool force_max_multiplier = false;
  bool use_iou_for_bool = false;
  double iou_threshold = 0.99;
};

// same(ref, res, fp64_ref, ...). `fp64_ref` None means "use ref" (upstream's default), also at
// any level of the tree. `root` names the top of the tree in leaf paths ("output" gives
// output[0], output['logits']).
SameResult same(const c10::IValue& ref, const c10::IValue& res,
                const c10::IValue& fp64_ref = c10::IValue(), const SameOptions& options = {},
                const std::string& root = "output");

// One tensor leaf under the tensor rules. An undefined `fp64_ref` means "use ref".
TensorDiagnosis compare_tensors(const std::string& path, const at::Tensor& ref,
                                const at::Tensor& res, const at::Tensor& fp64_ref,
                                const SameOptions& options);

// Named tensor lists (gradients, parameters after the step, buffers), compared position by
// position as upstream compares these lists; leaves are named "<group>:<name>" after the
// reference's names. An empty `fp64_ref` means "use ref"; undefined tensors count as None.
struct NamedTensor {
  std::string name;
  at::Tensor tensor;
};
SameResult compare_named(const std::string& group, const std::vector<NamedTensor>& ref,
                         const std::vector<NamedTensor>& res,
                         const std::vector<NamedTensor>& fp64_ref, const SameOptions& options);

// The leaves of a tree with their paths, in the order `same` visits them.
struct Leaf {
  std::string path;
  c10::IValue value;
};
std::vector<Leaf> flatten_leaves(const c10::IValue& tree, const std::string& root = "output");

// The multiplier of the rmse rule (upstream's get_multiplier), exposed for the diagnosis and
// its tests.
double rmse_multiplier(const SameOptions& options, double tol, c10::ScalarType res_dtype,
                       int64_t fp64_numel, c10::IntArrayRef ref_sizes);

}  // namespace zoobench::accuracy
