// Upstream's result files (--output-format upstream): the names runner.py gives them,
// `{backend}_{suite}_{dtype}_{mode}_{device}_{accuracy|performance}.csv`, and exactly the columns
// benchmarks/dynamo/common.py writes, in its order (the version of the TorchBench checkout in
// ../shared/torchbench; tests/python/test_upstream_format.py reads its common.py and fails when
// they part):
//   accuracy     dev, name, batch_size, accuracy, <dynamo's counters>, compilation_latency
//   performance  dev, name, batch_size, speedup, abs_latency, compilation_latency,
//                compression_ratio, eager_peak_mem, dynamo_peak_mem, <dynamo's counters>
// with upstream's speedup: against Python eager (the rows' python_speedup). Dynamo's counters
// (and an accuracy row's compilation_latency) are empty where nothing was measured: a backend
// outside the torch.compile family, a row that failed before dynamo compiled. A performance row
// of a model that did not run is upstream's placeholder, which readers know by its zeros: batch
// size 0, speedup and latency 0.000000, the other columns 0. zoobench's own columns stay in
// zoobench's files.
#pragma once

#include <string>
#include <vector>

#include "zoobench/results/rows.h"

namespace zoobench {

// get_dynamo_stats()'s keys, in its order.
const std::vector<std::string>& upstream_dynamo_counters();
const std::vector<std::string>& upstream_columns(ExperimentKind kind);
// The file name upstream's runner.py gives the rows of this row's run.
std::string upstream_file_name(const ResultRow& row);
// The row as upstream's cells, in upstream_columns' order.
std::vector<std::string> upstream_record(const ResultRow& row);

// One upstream file: the records a run adds, after those the file already holds (--resume),
// the whole file rewritten at each row as upstream does. A file with other columns is refused.
class UpstreamSink {
 public:
  UpstreamSink(ExperimentKind kind, std::string path);
  // Whether the file held nothing when it was opened: a resumed run then seeds it with the rows
  // zoobench's own file already has, so upstream's file lists every model too.
  bool started_empty() const { return started_empty_; }
  void write(const ResultRow& row);
  void write(const std::vector<ResultRow>& rows);
  const std::string& path() const { return path_; }

 private:
  ExperimentKind kind_;
  std::string path_;
  std::vector<std::vector<std::string>> records_;
  bool started_empty_ = true;
};

}  // namespace zoobench
