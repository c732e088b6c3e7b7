// `zoobench same REF RES [--fp64 FILE]`: compares outputs saved by Python's torch.save with
// PyTorch's accuracy rule (torch._dynamo.utils.same) and prints the verdict and the worst
// tensors. Exit 0 same, 1 different, 2 when a file cannot be read.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "zoobench/accuracy/compare.h"
#include "zoobench/serialization/torch_save.h"
#include "zoobench/util/cli_checks.h"
#include "zoobench/util/errors.h"

namespace zoobench::cli {
namespace {

struct SameArgs {
  std::string ref, res, fp64;
  accuracy::SameOptions options;
};

c10::IValue load(const std::string& role, const std::string& path) {
  try {
    return serialization::load_torch_save(path, c10::Device(c10::kCPU));
  } catch (const std::exception& e) {
    throw UsageError(fmt::format(
        "same: cannot read the {} file: {}\n(expected a file written by Python's torch.save: a "
        "tensor or nested tuples/lists/dicts of tensors and scalars)",
        role, e.what()));
  }
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", v);
}

int run_same(const SameArgs& args) {
  const c10::IValue ref = load("REF", args.ref);
  const c10::IValue res = load("RES", args.res);
  const c10::IValue fp64 = args.fp64.empty() ? c10::IValue() : load("--fp64", args.fp64);
  const accuracy::SameResult result = accuracy::same(ref, res, fp64, args.options);
  const accuracy::SameSummary& s = result.summary;

  if (result.pass) {
    std::cout << fmt::format("same: PASS ({} tensors", s.total);
    if (s.total > 0)
      std::cout << fmt::format(", worst margin {} at {}", number(s.worst_margin), s.worst_path);
    std::cout << ")\n";
  } else {
    std::cout << fmt::format(
        "same: FAIL ({} of {} tensors differ, worst margin {} at {}; smallest passing tol {})\n",
        s.failed, s.total, number(s.worst_margin), s.worst_path, number(s.min_passing_tol));
  }
  const auto worst = accuracy::worst_leaves(result, 5);
  if (worst.empty()) return result.pass ? kExitOk : kExitFailed;
  size_t width = 4;
  for (const auto* leaf : worst) width = std::max(width, leaf->path.size());
  std::cout << fmt::format("  {:<{}}  {:<9} {:>10} {:>10} {:>9}\n", "path", width, "rule",
                           "max_abs", "mean_abs", "margin");
  for (const auto* leaf : worst) {
    std::cout << fmt::format("  {:<{}}  {:<9} {:>10} {:>10} {:>9}", leaf->path, width,
                             accuracy::rule_name(leaf->rule), number(leaf->max_abs),
                             number(leaf->mean_abs), number(leaf->margin));
    std::cout << (leaf->pass ? std::string("\n") : "  FAIL: " + leaf->reason + "\n");
  }
  return result.pass ? kExitOk : kExitFailed;
}

void setup_same(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<SameArgs>();
  CLI::App* cmd = app.add_subcommand(
      "same",
      "Compare outputs saved with Python's torch.save by PyTorch's accuracy rule "
      "(torch._dynamo.utils.same); exit 0 same, 1 different, 2 unreadable input");
  cmd->add_option("REF", args->ref, "the reference (eager) outputs")->required();
  cmd->add_option("RES", args->res, "the outputs to check (compiled)")->required();
  cmd->add_option("--fp64", args->fp64,
                  "float64 golden outputs (default: REF, which skips the rmse rule unless REF is "
                  "float64)");
  cmd->add_option("--tol", args->options.tol, "tolerance (atol = rtol)")
      ->default_val(1e-4)
      ->check(zoobench::finite_number(0));
  cmd->add_flag("--cosine", args->options.cos_similarity, "cosine-similarity rule (>= 0.99)");
  cmd->add_flag("--equal-nan", args->options.equal_nan, "NaN equals NaN");
  cmd->add_flag("--larger-multiplier-for-small-tensors",
                args->options.use_larger_multiplier_for_smaller_tensor,
                "rmse multiplier 10 for <= 10 elements, 8 for <= 500");
  auto* iou = cmd->add_flag("--iou-for-bool", args->options.use_iou_for_bool,
                            "compare boolean masks by intersection over union");
  cmd->add_option("--iou-threshold", args->options.iou_threshold, "IoU needed to pass")
      ->default_val(0.99)
      ->check(zoobench::finite_range(0.0, 1.0))
      ->needs(iou);
  cmd->callback([args, &exit_status] { exit_status = run_same(*args); });
}

}  // namespace

ZOOBENCH_COMMAND(same, setup_same);

}  // namespace zoobench::cli
