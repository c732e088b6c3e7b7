// The backends on the CPU: the shared table of cases (backend_cases.h) and what only the CPU
// build can say: the registry, why cudagraphs and aot_inductor do not run here, and that the
// table's comparison would notice a wrong result.
#include <gtest/gtest.h>

#include "unit/backends/backend_cases.h"
#include "zoobench/util/errors.h"

namespace zoobench::backend_cases {
namespace {

INSTANTIATE_TEST_SUITE_P(Cpu, BackendTable, ::testing::ValuesIn(backend_cases(c10::kCPU)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Cpu, BackendOnDevice, ::testing::Values(c10::kCPU));

TEST(BackendRegistry, UnknownNameListsTheAvailableOnes) {
  try {
    make_backend("no pe!");  // not even a name dynamo could know
    FAIL() << "make_backend(\"no pe!\") did not throw";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'no pe!'"), std::string::npos) << message;
    for (const char* name : {"eager", "jit", "cudagraphs", "aot_inductor", "python_eager", "inductor"}) {
      EXPECT_NE(message.find(name), std::string::npos) << message;
    }
  }
  // A plain name may be a dynamo backend: whether dynamo knows it is the embedded Python's to
  // say, and a name it does not know cannot run, with the reason.
  auto unknown = make_backend("nope");
  ASSERT_TRUE(unknown->unavailable_reason().has_value());
  const std::string why = *unknown->unavailable_reason();
  EXPECT_TRUE(why.find("dynamo has no backend 'nope'") != std::string::npos ||
              why.find("torch.compile needs PyTorch >= 2.0") != std::string::npos)
      << why;
}

TEST(BackendRegistry, EveryListedBackendIsMadeUnderItsName) {
  std::vector<std::string> names;
  for (const auto& listing : list_backends()) {
    names.push_back(listing.name);
    EXPECT_FALSE(listing.description.empty()) << listing.name;
    EXPECT_EQ(make_backend(listing.name)->name(), listing.name);
  }
  for (const char* expected : {"eager", "jit", "cudagraphs", "aot_inductor", "python_eager", "inductor",
                               "inductor:reduce-overhead", "aot_eager"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
}

// torch.compile's names: NAME[:MODE], the default mode spelled out or not, compile:NAME for
// dynamo's backends whose names are zoobench's own; wrong modes and modes after zoobench's own
// backends are usage errors that say what is allowed.
TEST(BackendRegistry, TorchCompileNamesAndModes) {
  EXPECT_EQ(make_backend("inductor")->name(), "inductor");
  // inductor:default is torch.compile's default mode; inductor is upstream's (CUDA graphs on CUDA)
  EXPECT_EQ(make_backend("inductor:default")->name(), "inductor:default");
  EXPECT_EQ(make_backend("inductor:max-autotune-no-cudagraphs")->name(), "inductor:max-autotune-no-cudagraphs");
  EXPECT_EQ(make_backend("compile:eager")->name(), "compile:eager");
  EXPECT_EQ(make_backend("eager")->family(), "zoobench");
  EXPECT_EQ(make_backend("python_eager")->family(), "python");
  EXPECT_EQ(make_backend("aot_eager")->family(), "torch.compile");
  EXPECT_TRUE(is_torch_compile_backend("inductor:reduce-overhead"));
  EXPECT_FALSE(is_torch_compile_backend("jit"));
  EXPECT_FALSE(is_torch_compile_backend("python_eager"));
  try {
    make_backend("inductor:fastest");
    FAIL() << "an unknown mode was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("reduce-overhead"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_backend("jit:max-autotune"), UsageError);
  EXPECT_THROW(make_backend("in ductor"), UsageError);
}

// What the runner and bisect ask of a backend, answered by the backend (no name compared
// elsewhere): whether it is CUDA graphs itself, whether --channels-last can apply, whether its
// prepared model's submodules can run alone; and which backend runs each eager reference.
TEST(BackendRegistry, TraitsTheRunnerAsksAreTheBackendsOwn) {
  for (const auto& listing : list_backends()) {
    SCOPED_TRACE(listing.name);
    auto backend = make_backend(listing.name);
    EXPECT_EQ(backend->is_cuda_graphs(), listing.name == "cudagraphs");
    EXPECT_EQ(backend->channels_last_refusal().has_value(), listing.name == "aot_inductor");
    const bool torchscript = listing.name == "eager" || listing.name == "jit" ||
                             listing.name == "cudagraphs";
    EXPECT_EQ(!backend->submodules_refusal().has_value(), torchscript);
  }
  EXPECT_TRUE(make_backend("inductor:reduce-overhead")->submodules_refusal().has_value());
  EXPECT_EQ(eager_reference_backend("python"), "python_eager");
  EXPECT_EQ(eager_reference_backend("torchscript"), "eager");
  EXPECT_EQ(resolve_eager_reference({"inductor", "python_eager"}), "python");
  EXPECT_EQ(resolve_eager_reference({"inductor", "jit"}), "torchscript");
}

TEST(BackendSupport, CudagraphsNeedsCuda) {
  Model model = load_model("mlp", c10::Device(c10::kCPU));
  auto reason = make_backend("cudagraphs")
                    ->unsupported_reason(model.manifest, request_for(c10::kCPU, Mode::kInference));
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("CUDA"), std::string::npos) << *reason;
}

TEST(BackendSupport, AotInductorSaysWhyNot) {
  Model model = load_model("mlp", c10::Device(c10::kCPU));
  auto backend = make_backend("aot_inductor");
  auto inference =
      backend->unsupported_reason(model.manifest, request_for(c10::kCPU, Mode::kInference));
  auto training =
      backend->unsupported_reason(model.manifest, request_for(c10::kCPU, Mode::kTraining));
  ASSERT_TRUE(training.has_value());
  if (!compat::kHasAotInductor) {
    // This build (LibTorch 1.13) has no AOTInductor runtime: the reason names the version and
    // what is needed.
    ASSERT_TRUE(inference.has_value());
    EXPECT_NE(inference->find(compat::torch_version()), std::string::npos) << *inference;
    EXPECT_NE(inference->find("2.6"), std::string::npos) << *inference;
  } else {
    EXPECT_FALSE(inference.has_value()) << *inference;
    EXPECT_NE(training->find("inference"), std::string::npos) << *training;
  }
}

TEST(BackendSupport, AotInductorWithoutPackageIsAModelLoadErrorSayingHowToExport) {
  Model model = load_model("mlp", c10::Device(c10::kCPU));
  auto backend = make_backend("aot_inductor");
  try {
    backend->prepare(model.manifest, request_for(c10::kCPU, Mode::kInference), model.inputs);
    FAIL() << "prepare without a package did not throw";
  } catch (const ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("--aoti"), std::string::npos) << e.what();
  }
}

// A package the exporter tried and could not make: the row says why (torch.export's own
// words), not "export it", which would only fail the same way again.
TEST(BackendSupport, AotInductorWhosePackageFailedAtExportSaysWhy) {
  Model model = load_model("mlp", c10::Device(c10::kCPU));
  model.manifest.artifact_failures["aoti.float32.cpu"] =
      "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u0, 1)\nmore";
  auto backend = make_backend("aot_inductor");
  try {
    backend->prepare(model.manifest, request_for(c10::kCPU, Mode::kInference), model.inputs);
    FAIL() << "prepare without a package did not throw";
  } catch (const ModelLoadError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("could not export mlp"), std::string::npos) << what;
    EXPECT_NE(what.find("Eq(u0, 1)"), std::string::npos) << what;
    EXPECT_EQ(what.find("more"), std::string::npos) << what;  // its first line only
    EXPECT_EQ(what.find("--aoti"), std::string::npos) << what;
  }
}

TEST(BackendSupport, EagerAndJitRunEveryTorchScriptModel) {
  Model model = load_model("conv_bn_relu", c10::Device(c10::kCPU));
  for (const char* name : {"eager", "jit"}) {
    for (Mode mode : {Mode::kInference, Mode::kTraining}) {
      EXPECT_FALSE(make_backend(name)
                       ->unsupported_reason(model.manifest, request_for(c10::kCPU, mode))
                       .has_value())
          << name;
    }
  }
}

TEST(BackendErrors, StepOnAnInferenceExecutableThrows) {
  Model model = load_model("mlp", c10::Device(c10::kCPU));
  auto executable = make_backend("eager")->prepare(
      model.manifest, request_for(c10::kCPU, Mode::kInference), model.inputs);
  EXPECT_THROW(executable->step(model.inputs), std::logic_error);
}

TEST(BackendErrors, UnknownOptimizerIsAUsageError) {
  Model model = load_model("mlp", c10::Device(c10::kCPU));
  BackendRequest request = request_for(c10::kCPU, Mode::kTraining);
  request.optimizer.kind = "rmsprop";
  EXPECT_THROW(make_backend("eager")->prepare(model.manifest, request, model.inputs), UsageError);
}

TEST(BackendErrors, ChangedArtifactIsRefused) {
  Model model = load_model("mlp", c10::Device(c10::kCPU));
  Manifest changed = model.manifest;
  changed.artifacts["eval"].sha256 = std::string(64, '0');
  EXPECT_THROW(make_backend("eager")->prepare(changed, request_for(c10::kCPU, Mode::kInference),
                                              model.inputs),
               ModelLoadError);
  EXPECT_THROW(
      make_backend("jit")->prepare(changed, request_for(c10::kCPU, Mode::kInference), model.inputs),
      ModelLoadError);
}

// The table's comparison is only worth its verdicts if it can fail: a relative change of one
// element by 10x the tolerance, a renamed tensor, a changed integer buffer and a NaN all fail.
TEST(CompareRecords, NoticesWhatIsWrong) {
  Record ref = {{"output", at::linspace(-1, 1, 11, at::kDouble)},
                {"buffer:bn.num_batches_tracked", at::tensor(int64_t{2})}};
  auto with = [&](const std::function<void(Record&)>& change) {
    Record res = {{"output", ref[0].tensor.to(at::kFloat)},
                  {"buffer:bn.num_batches_tracked", at::tensor(int64_t{2})}};
    change(res);
    return res;
  };
  const Tolerance tol{1e-5, 1e-4};
  EXPECT_TRUE(compare_records(ref, with([](Record&) {}), tol).pass);

  Verdict one_element =
      compare_records(ref, with([](Record& r) { r[0].tensor[10] *= (1 + 1e-3); }), tol);
  EXPECT_FALSE(one_element.pass);
  EXPECT_EQ(one_element.worst_path, "output");
  EXPECT_NEAR(one_element.worst_ratio, 1e-3 / (1e-5 + 1e-4), 0.01);

  EXPECT_FALSE(compare_records(ref, with([](Record& r) { r[0].path = "output[0]"; }), tol).pass);
  EXPECT_FALSE(compare_records(ref, with([](Record& r) { r[1].tensor += 1; }), tol).pass);
  EXPECT_FALSE(compare_records(ref, with([](Record& r) { r[0].tensor[3] = NAN; }), tol).pass);
  EXPECT_FALSE(compare_records(ref, with([](Record& r) {
                                 r[0].tensor = r[0].tensor.reshape({11, 1});
                               }),
                               tol)
                   .pass);
  EXPECT_FALSE(compare_records(ref, with([](Record& r) { r.pop_back(); }), tol).pass);
}

}  // namespace
}  // namespace zoobench::backend_cases
