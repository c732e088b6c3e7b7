// The latency matrix: for each suite and each (device, mode, dtype), one row per model and one
// column per backend, so backends that ran in one invocation read side by side. Each cell is
// the compiled latency (abs_latency, ms per iteration), marked when the backend's accuracy row
// for that model did not pass; the fastest backend with a passing (or unchecked) result is
// marked per model. Where both zoobench's own backends and torch.compile's ran, each model gets
// the ratio best zoobench / best torch.compile (below 1: zoobench is faster), and each backend
// its geomean latency relative to the best torch.compile latency of each model. Latencies come
// from different processes, and on a VM the same eager model's latency varied up to 1.8x between
// them (docs/performance.md), so each model also gets the ratio per eager: each backend's latency
// divided by the eager reference timed beside it in its own process (1 / its speedup), best
// zoobench over best torch.compile. And the ratio of kernel time: the device kernel time of the
// same two backends (zoobench's fastest over torch.compile's fastest), which no host's pace
// enters: where it is near 1 and the latency ratio below, zoobench's lead is the host time it
// saves, not its kernels (docs/results.md, HuggingFace inference). A model that lacks the row of
// one of the compared backends (the run has not reached it) gets none of the ratios.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench::report {

struct MatrixCell {
  std::optional<double> latency_ms;  // the performance row's abs_latency, when it passed
  std::string status;                // the performance row's status ("" when there is no row)
  std::string accuracy;              // the accuracy row's status for this backend ("" when none)
  std::optional<double> speedup;     // eager / compiled, both timed in that backend's process
  std::optional<double> kernel_ms;   // compiled_op_ms: the device's kernel time per iteration
  bool unstable = false;             // the row's samples varied too much: it may not reproduce
  bool accuracy_failed() const;      // an accuracy row that is neither pass nor pass_due_to_skip
};

struct MatrixRow {
  std::string model;
  std::vector<MatrixCell> cells;  // parallel to LatencyMatrix::backends
  std::optional<std::size_t> fastest;
  // best zoobench-family latency / best torch.compile-family latency (both with results that
  // did not fail accuracy)
  std::optional<double> zoobench_vs_torch_compile;
  // best torch.compile speedup / best zoobench speedup: the same ratio, each latency taken
  // relative to its own process's eager reference
  std::optional<double> zoobench_vs_torch_compile_per_eager;
  // kernel time of zoobench's fastest / kernel time of torch.compile's fastest (by latency)
  std::optional<double> zoobench_vs_torch_compile_kernels;
};

struct LatencyMatrix {
  std::string suite, dev, mode, dtype;
  std::vector<std::string>
      backends;  // python_eager, zoobench's, torch.compile's; else first appearance
  std::vector<std::string> families;  // parallel: "zoobench", "torch.compile", "python"
  std::vector<MatrixRow> rows;        // sorted by model
  // Per backend: geomean of latency / best torch.compile latency over the models where both exist.
  std::vector<std::optional<double>> geomean_vs_torch_compile;
  std::optional<double> geomean_zoobench_vs_torch_compile;
  std::optional<double> geomean_zoobench_vs_torch_compile_per_eager;
  std::optional<double> geomean_zoobench_vs_torch_compile_kernels;
  int zoobench_at_or_below = 0, compared = 0;  // models where best zoobench <= best torch.compile
  int incomplete = 0;  // models not compared: a zoobench or torch.compile backend has no row yet

  std::string title() const;  // "timm_models · cuda · inference · float32"
  // Whether some model has results from both zoobench's own backends and torch.compile's
  // (compared, or not yet for lack of a row): only then do the comparison columns mean anything.
  bool compares_with_torch_compile() const;
  // The comparison in words, as both reports print it under the matrix.
  std::string comparison_sentence() const;
};

// One matrix per suite and (device, mode, dtype) that has performance rows of at least two
// backends; none otherwise.
std::vector<LatencyMatrix> build_latency_matrices(const std::vector<ResultRow>& rows);

}  // namespace zoobench::report
