// What a comparison found, leaf by leaf and in sum: for every compared value its path, the rule
// that decided it, by how much it passed or failed (the margin), and the smallest tolerance
// that would have passed it; for the whole tree the worst leaf, max/mean absolute error,
// failed/total and the smallest passing tolerance.
//
// Margin (<= 1 passes, > 1 fails; the verdict and the margin always agree):
//   rmse      res_error / (multiplier * ref_error + tol / 10), errors being rmse against fp64
//   allclose  the smallest atol = rtol that allclose would accept, divided by tol
//             (max over elements of |ref - res| / (tol * (1 + |res|)))
//   nan       the same ratio for allclose(fp64 -> res dtype, res) at the fixed 4e-2
//   cosine    (1 - similarity) / (1 - 0.99)
//   iou       (1 - IoU) / (1 - iou_threshold)
//   exact, structure, dtype: 0 when equal, +inf when not
// Ratios are computed in float64 while the verdict follows the tensor's dtype arithmetic (as
// torch does); where the two disagree by rounding at the boundary, the margin is clamped to 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace zoobench::accuracy {

enum class Rule {
  kExact,        // None / bool / int / str / device leaves: Python's ==
  kAllclose,     // torch.allclose(ref, res, atol=tol, rtol=tol); bool tensors compare as uint8
  kNanFallback,  // ref has NaN, res and fp64 have none: allclose(fp64, res, atol=rtol=4e-2)
  kRmse,         // rmse(fp64, res) <= multiplier * rmse(fp64, ref) + tol / 10
  kCosine,       // cosine similarity of the flattened float32 tensors >= 0.99
  kIou,          // boolean masks: |ref & res| / |ref | res| >= iou_threshold
  kStructure,    // containers, types, keys, lengths or shapes differ
  kDtype,        // exact_dtype and the dtypes differ
  kIgnored,      // ignore_non_fp: a non-floating value upstream does not compare
};

// "exact", "allclose", "nan", "rmse", "cosine", "iou", "structure", "dtype", "ignored".
std::string_view rule_name(Rule rule);

struct TensorDiagnosis {
  static constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

  std::string path;  // output[0], output['logits'], grad:layer1.0.conv1.weight, ...
  Rule rule = Rule::kExact;
  bool pass = false;
  bool is_tensor = false;  // tensors and Python floats (compared as 0-d tensors)
  std::string reason;      // why it failed, in words; empty when it passed
  std::string dtype;       // the reference's dtype ("float32") or kind ("int", "str", "list")
  std::vector<int64_t> sizes;
  int64_t numel = 0;
  int64_t mismatched = 0;  // elements outside allclose(atol=rtol=tol)
  double max_abs = 0;      // max |ref - res|; NaN when a NaN sits on one side only
  double mean_abs = 0;
  double rmse_ref = kNotMeasured;    // rmse(fp64, ref): only with a float64 reference
  double rmse_res = kNotMeasured;    // rmse(fp64, res)
  double multiplier = kNotMeasured;  // the rmse rule's multiplier, where that rule ran
  double cosine = kNotMeasured;      // cosine similarity, where that rule ran
  double iou = kNotMeasured;         // intersection over union, where that rule ran
  double margin = 0;                 // see the header comment
  double min_passing_tol = 0;        // smallest tol with which this leaf passes; +inf: none
};

struct SameSummary {
  bool pass = true;
  std::size_t total = 0;
  std::size_t failed = 0;
  double worst_margin = 0;
  std::string worst_path;
  std::ptrdiff_t worst_index = -1;  // into SameResult::leaves
  std::string first_failure;        // the first failing leaf in upstream's order (what it logs)
  double max_abs = 0;               // over every tensor leaf (NaN if any is NaN)
  double mean_abs = 0;              // over every element of every tensor leaf
  int64_t numel = 0;                // elements compared
  double min_passing_tol = 0;       // the largest of the leaves' (+inf if one never passes)
};

struct SameResult {
  bool pass = true;
  std::vector<TensorDiagnosis> leaves;  // in upstream's order (dict keys sorted)
  SameSummary summary;
};

SameSummary summarize(const std::vector<TensorDiagnosis>& leaves);

// One verdict over several comparisons (outputs, loss, grads, ...): leaves appended in order.
SameResult combine(const std::vector<SameResult>& parts);

// Up to `count` leaves, worst margin first (failures before passes at equal margin).
std::vector<const TensorDiagnosis*> worst_leaves(const SameResult& result, std::size_t count);

}  // namespace zoobench::accuracy
