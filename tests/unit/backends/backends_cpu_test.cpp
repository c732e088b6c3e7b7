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
    make_backend("nope");
    FAIL() << "make_backend(\"nope\") did not throw";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'nope'"), std::string::npos) << message;
    for (const char* name : {"eager", "jit", "cudagraphs", "aot_inductor"}) {
      EXPECT_NE(message.find(name), std::string::npos) << message;
    }
  }
}

TEST(BackendRegistry, EveryListedBackendIsMadeUnderItsName) {
  auto listed = list_backends();
  std::vector<std::string> names;
  for (const auto& [name, description] : listed) {
    names.push_back(name);
    EXPECT_FALSE(description.empty()) << name;
    EXPECT_EQ(make_backend(name)->name(), name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"eager", "jit", "cudagraphs", "aot_inductor"}));
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
