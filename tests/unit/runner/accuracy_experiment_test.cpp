// The accuracy experiment end to end on the CPU, on models exported by the real exporter
// (unit/backends/small_zoo.h: torchvision's resnet18 at batch 1 and 64x64, and small
// hand-made models): real backends pass, and test backends that wrap a real one show that each
// way of being wrong gets its status, with the guilty tensor named.
//
// Test backends (each wraps eager or jit and changes one thing):
//   GradientScaling    in training, after every step, multiplies one named gradient by (1 + eps)
//   NoisyOutputs       adds noise to inference outputs on chosen fp32 runs (as an "eager" that
//                      differs from itself, or a compiled backend that is wrong sometimes)
//   Float64Refusing    throws when asked for float64 (a model or device without fp64)
//   Throwing           prepares, then throws when run
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <set>

#include "unit/backends/small_zoo.h"
#include "zoobench/accuracy/experiment.h"
#include "zoobench/backends/backend.h"
#include "zoobench/util/compat.h"
#include "zoobench/zoo/model_files.h"

namespace zoobench {
namespace {

// --- Test backends --------------------------------------------------------------------------

// An executable that forwards to another and lets the test change what comes out.
class WrappedExecutable : public Executable {
 public:
  explicit WrappedExecutable(std::unique_ptr<Executable> inner) : inner_(std::move(inner)) {}
  c10::IValue run(const std::vector<c10::IValue>& inputs) override {
    return after_run(inner_->run(inputs));
  }
  StepResult step(const std::vector<c10::IValue>& inputs) override {
    StepResult result = inner_->step(inputs);
    after_step();
    return after_step_result(std::move(result));
  }
  TrainingState training_state() const override { return inner_->training_state(); }
  ExecutionInfo info() const override { return inner_->info(); }

  std::function<c10::IValue(c10::IValue)> after_run = [](c10::IValue v) { return v; };
  std::function<void()> after_step = [] {};
  std::function<StepResult(StepResult)> after_step_result = [](StepResult r) { return r; };

 protected:
  std::unique_ptr<Executable> inner_;
};

// A backend that forwards to another; `wrap` decides what each prepared executable does.
class WrappingBackend : public Backend {
 public:
  WrappingBackend(std::string name, std::string inner)
      : name_(std::move(name)), inner_(make_backend(inner)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "test backend around " + inner_->name(); }
  std::optional<std::string> unsupported_reason(const Manifest& manifest,
                                                const BackendRequest& request) const override {
    return inner_->unsupported_reason(manifest, request);
  }
  std::unique_ptr<Executable> prepare(const Manifest& manifest, const BackendRequest& request,
                                      const std::vector<c10::IValue>& example_inputs) override {
    ++prepares;
    if (before_prepare) before_prepare(request);
    auto wrapped =
        std::make_unique<WrappedExecutable>(inner_->prepare(manifest, request, example_inputs));
    if (wrap) wrap(*wrapped, request);
    return wrapped;
  }

  int prepares = 0;
  std::function<void(const BackendRequest&)> before_prepare;
  std::function<void(WrappedExecutable&, const BackendRequest&)> wrap;

 private:
  std::string name_;
  std::unique_ptr<Backend> inner_;
};

// GradientScaling: after each training step, grad(<parameter>) *= 1 + eps.
std::unique_ptr<WrappingBackend> gradient_scaling(const std::string& inner,
                                                  const std::string& gradient, double eps) {
  auto backend = std::make_unique<WrappingBackend>("scaled_grad", inner);
  backend->wrap = [gradient, eps](WrappedExecutable& executable, const BackendRequest&) {
    executable.after_step = [&executable, gradient, eps] {
      for (auto& [name, grad] : executable.training_state().gradients) {
        if (name == gradient) {
          c10::NoGradGuard no_grad;
          grad.mul_(1.0 + eps);
          return;
        }
      }
      throw std::runtime_error("test backend: no gradient named " + gradient);
    };
  };
  return backend;
}

// NoisyOutputs: adds relative noise of `amount` to every output tensor of the fp32 runs whose
// number (1-based, counting prepares of fp32 executables) is in `noisy_runs`.
std::unique_ptr<WrappingBackend> noisy_outputs(const std::string& inner, std::set<int> noisy_runs,
                                               double amount) {
  auto backend = std::make_unique<WrappingBackend>("noisy", inner);
  auto fp32_runs = std::make_shared<int>(0);
  backend->wrap = [fp32_runs, noisy_runs, amount](WrappedExecutable& executable,
                                                  const BackendRequest& request) {
    if (request.dtype() != c10::kFloat) return;
    if (!noisy_runs.count(++*fp32_runs)) return;
    executable.after_run = [amount](c10::IValue outputs) -> c10::IValue {
      auto noisy = [amount](const at::Tensor& t) {
        at::Generator generator = at::detail::createCPUGenerator(99);
        return t + t.abs() * amount * at::randn(t.sizes(), generator, t.options());
      };
      if (outputs.isTensor()) return noisy(outputs.toTensor());
      std::vector<c10::IValue> elements;
      for (const auto& e : outputs.toTupleRef().elements())
        elements.push_back(e.isTensor() ? noisy(e.toTensor()) : e);
      return c10::ivalue::Tuple::create(std::move(elements));
    };
  };
  return backend;
}

// --- Fixture -----------------------------------------------------------------------------------

class AccuracyExperiment : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::SmallZooOptions options;
    options.resnet18 = true;
    zoo_ = testing::small_zoo_dir(options);
    ASSERT_FALSE(zoo_.empty()) << "the test zoo could not be exported";
    // As the runner does before an accuracy experiment.
    compat::set_deterministic_numerics(true);
  }

  Manifest manifest(const std::string& name) {
    return read_manifest(testing::small_model_manifest(zoo_, name));
  }

  BackendRequest request(Mode mode) {
    BackendRequest r;
    r.mode = mode;
    return r;
  }

  // The suite rule's tolerance (torchbench on CPU: 1e-4).
  AccuracyOptions options(const std::string& model, Mode mode) {
    AccuracyOptions o;
    o.tolerance =
        SuiteConfig("torchbench").tolerance(model, mode, Precision::kFloat32, "cpu", false);
    return o;
  }

  AccuracyRecord run(const std::string& model, Backend& eager, Backend& compiled, Mode mode,
                     const AccuracyOptions& accuracy) {
    Manifest m = manifest(model);
    return run_accuracy_experiment(m, eager, compiled, request(mode),
                                   load_inputs(m, c10::Device(c10::kCPU)), accuracy);
  }

  std::string zoo_;
};

std::string describe(const AccuracyRecord& r) {
  return std::string(status_name(r.status)) + " (" + r.reason + "); worst " + r.worst_tensor +
         " margin " + std::to_string(r.margin.value_or(-1)) + ", " +
         std::to_string(r.failed_tensors) + "/" + std::to_string(r.total_tensors) + " failed";
}

// --- Real backends pass -------------------------------------------------------------------------

TEST_F(AccuracyExperiment, Resnet18InferenceJitPasses) {
  auto eager = make_backend("eager");
  auto jit = make_backend("jit");
  AccuracyRecord r =
      run("resnet18", *eager, *jit, Mode::kInference, options("resnet18", Mode::kInference));
  EXPECT_EQ(r.status, Status::kPass) << describe(r);
  EXPECT_TRUE(r.reason.empty()) << r.reason;
  EXPECT_TRUE(r.fp64_available);
  EXPECT_DOUBLE_EQ(r.tolerance.tolerance, 1e-4);
  EXPECT_EQ(r.total_tensors, 1);
  EXPECT_EQ(r.failed_tensors, 0);
  EXPECT_EQ(r.worst_tensor, "output");
  ASSERT_TRUE(r.margin.has_value());
  EXPECT_LT(*r.margin, 1.0);
  EXPECT_TRUE(r.max_abs.has_value());
  EXPECT_EQ(r.compiled_info.cudagraphs, "off");
  EXPECT_GT(r.duration_s, 0.0);
}

TEST_F(AccuracyExperiment, Resnet18TrainingJitPasses) {
  auto eager = make_backend("eager");
  auto jit = make_backend("jit");
  AccuracyRecord r =
      run("resnet18", *eager, *jit, Mode::kTraining, options("resnet18", Mode::kTraining));
  EXPECT_EQ(r.status, Status::kPass) << describe(r);
  // What upstream judges: the loss, then per parameter its gradient and value after the step,
  // and every buffer (the output is compared apart: strict_accuracy).
  torch::jit::Module module =
      load_torchscript(manifest("resnet18"), "train", c10::Device(c10::kCPU));
  const int params = static_cast<int>(module.parameters().size());
  const int buffers = static_cast<int>(module.buffers().size());
  EXPECT_EQ(r.total_tensors, 1 + 2 * params + buffers);
  EXPECT_FALSE(r.strict_status.has_value()) << describe(r);
  EXPECT_EQ(r.failed_tensors, 0);
}

TEST_F(AccuracyExperiment, SmallModelsPassWithEagerAndJit) {
  for (const std::string model : {"conv_bn_relu", "mlp", "encoder_layer"}) {
    for (Mode mode : {Mode::kInference, Mode::kTraining}) {
      for (const std::string backend : {"eager", "jit"}) {
        SCOPED_TRACE(model + " " + mode_name(mode) + " " + backend);
        auto eager = make_backend("eager");
        auto compiled = make_backend(backend);
        AccuracyRecord r = run(model, *eager, *compiled, mode, options(model, mode));
        EXPECT_EQ(r.status, Status::kPass) << describe(r);
        // The float64 golden ran (encoder_layer's int64 position_ids buffer stayed int64).
        EXPECT_TRUE(r.fp64_available) << r.tolerance.source;
      }
    }
  }
}

// --- A wrong gradient is found and named --------------------------------------------------------

TEST_F(AccuracyExperiment, ScaledGradientFailsWithThatTensorNamedFirst) {
  auto eager = make_backend("eager");
  auto compiled = gradient_scaling("jit", "conv1.weight.grad", 0.5);
  AccuracyOptions accuracy = options("resnet18", Mode::kTraining);
  accuracy.summary = true;
  AccuracyRecord r = run("resnet18", *eager, *compiled, Mode::kTraining, accuracy);
  EXPECT_EQ(r.status, Status::kFailAccuracy) << describe(r);
  EXPECT_EQ(r.worst_tensor, "grad:conv1.weight.grad");
  EXPECT_EQ(r.failed_tensors, 1) << describe(r);
  ASSERT_TRUE(r.margin.has_value());
  EXPECT_GT(*r.margin, 1.0);
  ASSERT_FALSE(r.tensors.empty());
  EXPECT_EQ(r.tensors[0]["path"], "grad:conv1.weight.grad");
  EXPECT_EQ(r.tensors[0]["pass"], false);
  EXPECT_NE(r.reason.find("grad:conv1.weight.grad"), std::string::npos) << r.reason;
  // The smallest passing tolerance is above what was used.
  ASSERT_TRUE(r.min_passing_tol.has_value());
  EXPECT_GT(*r.min_passing_tol, r.tolerance.tolerance);
  // --accu-summary names the tensor and counts the failure in the gradients' group.
  EXPECT_NE(r.summary_text.find("grad:conv1.weight.grad"), std::string::npos) << r.summary_text;
  EXPECT_NE(r.summary_text.find("FAIL"), std::string::npos) << r.summary_text;
}

TEST_F(AccuracyExperiment, ScaledGradientBelowTolerancePasses) {
  auto eager = make_backend("eager");
  auto compiled = gradient_scaling("jit", "conv1.weight.grad", 1e-7);
  AccuracyRecord r =
      run("resnet18", *eager, *compiled, Mode::kTraining, options("resnet18", Mode::kTraining));
  EXPECT_EQ(r.status, Status::kPass) << describe(r);
}

// On a second model, another parameter: the gradient named is the one scaled.
TEST_F(AccuracyExperiment, ScaledGradientOfAnyParameterIsNamed) {
  for (const std::string gradient : {"bn.weight.grad", "head.bias.grad"}) {
    auto eager = make_backend("eager");
    auto compiled = gradient_scaling("eager", gradient, 0.5);
    AccuracyRecord r = run("conv_bn_relu", *eager, *compiled, Mode::kTraining,
                           options("conv_bn_relu", Mode::kTraining));
    EXPECT_EQ(r.status, Status::kFailAccuracy) << describe(r);
    EXPECT_EQ(r.worst_tensor, "grad:" + gradient);
    EXPECT_EQ(r.failed_tensors, 1) << describe(r);
  }
}

// --- The eager reference must agree with itself
// ---------------------------------------------------

TEST_F(AccuracyExperiment, EagerThatDiffersFromItselfIsReported) {
  auto eager = noisy_outputs("eager", {2}, 1e-3);  // the second fp32 eager run is noisy
  auto compiled = make_backend("jit");
  AccuracyRecord r =
      run("mlp", *eager, *compiled, Mode::kInference, options("mlp", Mode::kInference));
  EXPECT_EQ(r.status, Status::kEagerTwoRunsDiffer) << describe(r);
  EXPECT_NE(r.reason.find("non_deterministic"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("output"), std::string::npos) << r.reason;
  EXPECT_EQ(eager->prepares, 3) << "fp64, eager run 1, eager run 2: then it stops";
}

TEST_F(AccuracyExperiment, NonDeterministicModelSkipsTheBitwiseCheck) {
  auto eager = noisy_outputs("eager", {2}, 1e-3);
  auto compiled = make_backend("jit");
  AccuracyOptions accuracy = options("mlp", Mode::kInference);
  accuracy.non_deterministic = true;
  AccuracyRecord r = run("mlp", *eager, *compiled, Mode::kInference, accuracy);
  EXPECT_EQ(r.status, Status::kPass) << describe(r);
}

// Upstream counts a non_deterministic model's fail_accuracy as pass (common.py's record_status);
// zoobench judges it anyway and keeps its own verdict beside upstream's.
TEST_F(AccuracyExperiment, NonDeterministicFailureIsUpstreamsPassWithTheStrictVerdictKept) {
  auto eager = make_backend("eager");
  auto compiled = noisy_outputs("eager", {1}, 0.5);
  AccuracyOptions accuracy = options("mlp", Mode::kInference);
  accuracy.non_deterministic = true;
  AccuracyRecord r = run("mlp", *eager, *compiled, Mode::kInference, accuracy);
  EXPECT_EQ(r.status, Status::kPass) << describe(r);
  ASSERT_TRUE(r.strict_status.has_value()) << describe(r);
  EXPECT_EQ(*r.strict_status, Status::kFailAccuracy);
  EXPECT_NE(r.reason.find("non_deterministic"), std::string::npos) << r.reason;
  EXPECT_GT(r.failed_tensors, 0) << describe(r);
}

// accuracy.skip.eager_not_deterministic (training): upstream does not compare the eager runs and
// answers pass_due_to_skip once the compiled run ran; zoobench's verdict is the strict one, a
// wrong gradient included.
TEST_F(AccuracyExperiment, EagerNotDeterministicTrainingIsPassDueToSkipWithTheStrictVerdict) {
  AccuracyOptions accuracy = options("conv_bn_relu", Mode::kTraining);
  accuracy.eager_not_deterministic = true;
  {
    auto eager = make_backend("eager");
    auto compiled = make_backend("jit");
    AccuracyRecord r = run("conv_bn_relu", *eager, *compiled, Mode::kTraining, accuracy);
    EXPECT_EQ(r.status, Status::kPassDueToSkip) << describe(r);
    ASSERT_TRUE(r.strict_status.has_value());
    EXPECT_EQ(*r.strict_status, Status::kPass);
  }
  {
    auto eager = make_backend("eager");
    auto compiled = gradient_scaling("eager", "bn.weight.grad", 0.5);
    AccuracyRecord r = run("conv_bn_relu", *eager, *compiled, Mode::kTraining, accuracy);
    EXPECT_EQ(r.status, Status::kPassDueToSkip) << describe(r);
    ASSERT_TRUE(r.strict_status.has_value());
    EXPECT_EQ(*r.strict_status, Status::kFailAccuracy);
    EXPECT_EQ(r.worst_tensor, "grad:bn.weight.grad") << describe(r);
  }
}

// Upstream judges a training run by its loss, gradients, parameters and buffers, not its
// predictions (collect_results gets None): outputs that differ alone leave upstream's pass, and
// zoobench's strict verdict says fail_accuracy, naming the output.
TEST_F(AccuracyExperiment, TrainingOutputsAloneDifferingIsStrictNotUpstreamFailure) {
  auto eager = make_backend("eager");
  auto compiled = std::make_unique<WrappingBackend>("wrong_outputs", "eager");
  compiled->wrap = [](WrappedExecutable& executable, const BackendRequest&) {
    executable.after_step_result = [](StepResult result) {
      if (result.outputs.isTensor()) result.outputs = result.outputs.toTensor() * 1.5;
      else {
        std::vector<c10::IValue> elements = result.outputs.toTupleRef().elements().vec();
        elements[0] = elements[0].toTensor() * 1.5;
        result.outputs = c10::ivalue::Tuple::create(std::move(elements));
      }
      return result;
    };
  };
  AccuracyRecord r = run("conv_bn_relu", *eager, *compiled, Mode::kTraining,
                         options("conv_bn_relu", Mode::kTraining));
  EXPECT_EQ(r.status, Status::kPass) << describe(r);
  ASSERT_TRUE(r.strict_status.has_value()) << describe(r);
  EXPECT_EQ(*r.strict_status, Status::kFailAccuracy);
  EXPECT_NE(r.reason.find("output"), std::string::npos) << r.reason;
}

// NaN in the same place of every run but the float64 one (what an overflow in half precision
// does): upstream compares NaN as equal to NaN except under --float32, and so does zoobench.
std::unique_ptr<WrappingBackend> nan_in_first_output(const std::string& inner) {
  auto backend = std::make_unique<WrappingBackend>("nan_first", inner);
  backend->wrap = [](WrappedExecutable& executable, const BackendRequest& request) {
    if (request.dtype() == c10::kDouble) return;
    executable.after_run = [](c10::IValue outputs) -> c10::IValue {
      at::Tensor t = (outputs.isTensor() ? outputs.toTensor()
                                         : outputs.toTupleRef().elements()[0].toTensor()).clone();
      t.view(-1)[0] = std::numeric_limits<double>::quiet_NaN();
      if (outputs.isTensor()) return t;
      std::vector<c10::IValue> elements = outputs.toTupleRef().elements().vec();
      elements[0] = t;
      return c10::ivalue::Tuple::create(std::move(elements));
    };
  };
  return backend;
}

// Upstream's equal_nan: true unless the run asks for --float32 (the runner passes
// RunOptions::equal_nan), in any precision.
TEST_F(AccuracyExperiment, NanEqualsNanExceptUnderTheFloat32FlagAsUpstream) {
  Manifest m = manifest("mlp");
  auto inputs = load_inputs(m, c10::Device(c10::kCPU));
  for (Precision precision : {Precision::kFloat32, Precision::kBFloat16}) {
    for (bool equal_nan : {false, true}) {
      auto eager = nan_in_first_output("eager");
      auto compiled = nan_in_first_output("eager");
      BackendRequest r = request(Mode::kInference);
      r.precision = precision;
      AccuracyOptions accuracy;
      accuracy.tolerance =
          SuiteConfig("torchbench").tolerance("mlp", Mode::kInference, precision, "cpu", false);
      accuracy.equal_nan = equal_nan;
      std::vector<c10::IValue> cast = inputs;  // as the runner hands them over: in the run's dtype
      for (auto& input : cast) {
        if (input.isTensor() && input.toTensor().is_floating_point())
          input = input.toTensor().to(r.dtype());
      }
      AccuracyRecord record = run_accuracy_experiment(m, *eager, *compiled, r, cast, accuracy);
      EXPECT_EQ(record.status, equal_nan ? Status::kPass : Status::kEagerTwoRunsDiffer)
          << precision_name(precision) << ", equal_nan " << equal_nan << ": " << describe(record);
    }
  }
}

// --- Without float64, cosine --------------------------------------------------------------------

TEST_F(AccuracyExperiment, Float64FailureFallsBackToCosine) {
  auto eager = std::make_unique<WrappingBackend>("no_fp64", "eager");
  eager->before_prepare = [](const BackendRequest& request) {
    if (request.dtype() == c10::kDouble) throw std::runtime_error("float64 is not supported here");
  };
  auto compiled = make_backend("jit");
  AccuracyRecord r = run("conv_bn_relu", *eager, *compiled, Mode::kInference,
                         options("conv_bn_relu", Mode::kInference));
  EXPECT_EQ(r.status, Status::kPass) << describe(r);
  EXPECT_FALSE(r.fp64_available);
  EXPECT_TRUE(r.tolerance.cosine);
  EXPECT_NE(r.tolerance.source.find("cosine"), std::string::npos) << r.tolerance.source;
  EXPECT_NE(r.tolerance.source.find("float64 is not supported here"), std::string::npos)
      << r.tolerance.source;
}

// Upstream's cosine rule cannot see a gradient that is only scaled (the direction is the same)
// but does see outputs that point elsewhere.
TEST_F(AccuracyExperiment, CosineRuleJudgesDirection) {
  auto refuse_fp64 = [](const BackendRequest& request) {
    if (request.dtype() == c10::kDouble) throw std::runtime_error("no float64");
  };
  {
    auto eager = std::make_unique<WrappingBackend>("no_fp64", "eager");
    eager->before_prepare = refuse_fp64;
    auto compiled = gradient_scaling("eager", "bn.weight.grad", 0.5);
    AccuracyRecord r = run("conv_bn_relu", *eager, *compiled, Mode::kTraining,
                           options("conv_bn_relu", Mode::kTraining));
    EXPECT_EQ(r.status, Status::kPass) << describe(r);
    EXPECT_FALSE(r.fp64_available);
  }
  {
    auto eager = std::make_unique<WrappingBackend>("no_fp64", "eager");
    eager->before_prepare = refuse_fp64;
    auto compiled = noisy_outputs("eager", {1}, 1.0);
    AccuracyRecord r = run("conv_bn_relu", *eager, *compiled, Mode::kInference,
                           options("conv_bn_relu", Mode::kInference));
    EXPECT_EQ(r.status, Status::kFailAccuracy) << describe(r);
  }
}

// --- Other statuses -----------------------------------------------------------------------------

TEST_F(AccuracyExperiment, MajorityVoteOverCheckRuns) {
  AccuracyOptions accuracy = options("mlp", Mode::kInference);
  accuracy.check_runs = 3;
  {
    auto eager = make_backend("eager");
    auto compiled = noisy_outputs("eager", {2}, 0.5);  // wrong once in three
    AccuracyRecord r = run("mlp", *eager, *compiled, Mode::kInference, accuracy);
    EXPECT_EQ(r.status, Status::kPass) << describe(r);
    EXPECT_EQ(compiled->prepares, 3);
  }
  {
    // Wrong on the last run only: the vote passes, and the row describes a passing run (not
    // the last, failing one).
    auto eager = make_backend("eager");
    auto compiled = noisy_outputs("eager", {3}, 0.5);
    AccuracyRecord r = run("mlp", *eager, *compiled, Mode::kInference, accuracy);
    EXPECT_EQ(r.status, Status::kPass) << describe(r);
    EXPECT_EQ(r.failed_tensors, 0) << describe(r);
    ASSERT_TRUE(r.margin.has_value());
    EXPECT_LT(*r.margin, 1.0);
  }
  {
    auto eager = make_backend("eager");
    auto compiled = noisy_outputs("eager", {1, 3}, 0.5);  // wrong twice in three
    AccuracyRecord r = run("mlp", *eager, *compiled, Mode::kInference, accuracy);
    EXPECT_EQ(r.status, Status::kFailAccuracy) << describe(r);
    EXPECT_GT(r.failed_tensors, 0) << describe(r);
  }
}

TEST_F(AccuracyExperiment, CompiledBackendThatThrowsFailsToRun) {
  auto eager = make_backend("eager");
  auto compiled = std::make_unique<WrappingBackend>("broken", "eager");
  compiled->wrap = [](WrappedExecutable& executable, const BackendRequest&) {
    executable.after_run = [](c10::IValue) -> c10::IValue {
      throw std::runtime_error("kernel exploded\nat line 2");
    };
  };
  AccuracyRecord r =
      run("mlp", *eager, *compiled, Mode::kInference, options("mlp", Mode::kInference));
  EXPECT_EQ(r.status, Status::kFailToRun) << describe(r);
  EXPECT_NE(r.reason.find("broken"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("kernel exploded"), std::string::npos) << r.reason;
  EXPECT_EQ(r.reason.find("line 2"), std::string::npos) << "only the first line: " << r.reason;
}

TEST_F(AccuracyExperiment, EagerThatThrowsIsAnEagerFailure) {
  auto eager = std::make_unique<WrappingBackend>("broken_eager", "eager");
  eager->wrap = [](WrappedExecutable& executable, const BackendRequest& request) {
    if (request.dtype() != c10::kFloat) return;
    executable.after_run = [](c10::IValue) -> c10::IValue {
      throw std::runtime_error("eager broke");
    };
  };
  auto compiled = make_backend("jit");
  AccuracyRecord r =
      run("mlp", *eager, *compiled, Mode::kInference, options("mlp", Mode::kInference));
  EXPECT_EQ(r.status, Status::kEager1stRunFail) << describe(r);
}

TEST_F(AccuracyExperiment, ChangedArtifactIsModelFailToLoad) {
  Manifest m = manifest("mlp");
  m.artifacts["eval"].sha256 = std::string(64, 'f');
  auto eager = make_backend("eager");
  auto jit = make_backend("jit");
  AccuracyRecord r = run_accuracy_experiment(m, *eager, *jit, request(Mode::kInference),
                                             load_inputs(m, c10::Device(c10::kCPU)),
                                             options("mlp", Mode::kInference));
  EXPECT_EQ(r.status, Status::kModelFailToLoad) << describe(r);
  EXPECT_NE(r.reason.find("sha256"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace zoobench
