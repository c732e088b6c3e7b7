// The optimizer upstream's harness trains a model with (benchmarks/dynamo/common.py,
// BenchmarkRunner.init_optimizer), so that a training row's verdict and its graph breaks are
// those of upstream's run: on CUDA, Adam (capturable, foreach) but SGD for the models its lists
// name; no optimizer for CI_SKIP_OPTIMIZER's. Off CUDA upstream steps no optimizer at all;
// zoobench keeps SGD there, so that the parameters after the step are still checked.
#pragma once

#include <string>

namespace zoobench {

struct UpstreamOptimizerQuestion {
  std::string model;
  bool cuda = false;
  bool inductor = false;  // the dynamo backend is inductor (inductor, inductor:MODE)
  bool accuracy = false;  // an accuracy check (CUDA_INDUCTOR_ACCURACY_USE_SGD's condition)
  bool ci = false;        // --ci (CI_USE_SGD's condition)
};

struct OptimizerChoice {
  std::string kind;  // "sgd" | "adam" | "none"
  std::string why;   // for the model's plan line: the list or rule that chose it
};

OptimizerChoice upstream_optimizer(const UpstreamOptimizerQuestion& question);

}  // namespace zoobench
