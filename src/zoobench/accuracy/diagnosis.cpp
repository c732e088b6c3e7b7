// Summaries over compared leaves.
#include "zoobench/accuracy/diagnosis.h"

#include <algorithm>
#include <cmath>

namespace zoobench::accuracy {
namespace {

// NaN margins order as the worst.
double ordered(double margin) {
  return std::isnan(margin) ? std::numeric_limits<double>::infinity() : margin;
}

}  // namespace

std::string_view rule_name(Rule rule) {
  switch (rule) {
    case Rule::kExact:
      return "exact";
    case Rule::kAllclose:
      return "allclose";
    case Rule::kNanFallback:
      return "nan";
    case Rule::kRmse:
      return "rmse";
    case Rule::kCosine:
      return "cosine";
    case Rule::kIou:
      return "iou";
    case Rule::kStructure:
      return "structure";
    case Rule::kDtype:
      return "dtype";
    case Rule::kIgnored:
      return "ignored";
  }
  return "unknown";
}

SameSummary summarize(const std::vector<TensorDiagnosis>& leaves) {
  SameSummary summary;
  bool nan_max = false;
  double weighted_abs = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const TensorDiagnosis& leaf = leaves[i];
    ++summary.total;
    if (!leaf.pass) {
      ++summary.failed;
      summary.pass = false;
      if (summary.first_failure.empty()) summary.first_failure = leaf.path;
    }
    const double margin = ordered(leaf.margin);
    const bool failure_over_pass = margin == summary.worst_margin && !leaf.pass &&
                                   summary.worst_index >= 0 && leaves[summary.worst_index].pass;
    if (summary.worst_index < 0 || margin > summary.worst_margin || failure_over_pass) {
      summary.worst_margin = margin;
      summary.worst_path = leaf.path;
      summary.worst_index = static_cast<std::ptrdiff_t>(i);
    }
    summary.min_passing_tol = std::max(summary.min_passing_tol, leaf.min_passing_tol);
    if (leaf.is_tensor) {
      if (std::isnan(leaf.max_abs)) nan_max = true;
      summary.max_abs = std::max(summary.max_abs, leaf.max_abs);
      weighted_abs += leaf.mean_abs * static_cast<double>(leaf.numel);
      summary.numel += leaf.numel;
    }
  }
  if (nan_max) summary.max_abs = std::numeric_limits<double>::quiet_NaN();
  summary.mean_abs = summary.numel > 0 ? weighted_abs / static_cast<double>(summary.numel) : 0.0;
  return summary;
}

SameResult combine(const std::vector<SameResult>& parts) {
  SameResult combined;
  for (const auto& part : parts) {
    combined.leaves.insert(combined.leaves.end(), part.leaves.begin(), part.leaves.end());
  }
  combined.summary = summarize(combined.leaves);
  combined.pass = combined.summary.pass;
  return combined;
}

std::vector<const TensorDiagnosis*> worst_leaves(const SameResult& result, std::size_t count) {
  std::vector<const TensorDiagnosis*> order;
  for (const auto& leaf : result.leaves) order.push_back(&leaf);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (ordered(a->margin) != ordered(b->margin)) return ordered(a->margin) > ordered(b->margin);
    return !a->pass && b->pass;
  });
  if (order.size() > count) order.resize(count);
  return order;
}

}  // namespace zoobench::accuracy
