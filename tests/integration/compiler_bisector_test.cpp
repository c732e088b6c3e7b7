// `zoobench bisect` and Inductor's compiler bisector (bisect/compiler_bisector.h) through the real
// binary: where the exporter Python's torch has no torch._inductor.compiler_bisector (Debian's
// 1.13 here) the report says so in one line and bisect.json's `compiler_bisector` object; with
// --no-compiler-bisector it is not run; for a backend that is not Inductor it does not apply.
// On a torch with torch.compile the CPU model passes and there is nothing to bisect; the search
// on a planted fault runs on the GPU machine (gpu/compiler_bisector_cuda_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration_helpers.h"
#include "testing/testing.h"

namespace {

using namespace zoobench::integration;

struct InductorZoo {
  zt::ScratchDir dir;
  std::string zoo = dir.file("zoo"), suites = dir.file("suites");
  InductorZoo() { make_zoo(zoo, suites, "py", {{"mlp", "py_mlp"}}); }
  std::pair<zt::CommandResult, nlohmann::json> bisect(const std::string& name,
                                                      const std::string& extra) {
    const std::string out = dir.file(name);
    auto result = zt::run_command(zoobench_command(
        "bisect --suite py --only mlp --timeout 600 --zoo " + quote(zoo) + " --suites-dir " +
        quote(suites) + " --output-directory " + quote(out) + " " + extra));
    nlohmann::json record;
    if (fs::exists(out + "/bisect.json"))
      record = nlohmann::json::parse(read_text(out + "/bisect.json"));
    return {result, record};
  }
};

InductorZoo& zoo() {
  static InductorZoo* shared = new InductorZoo();  // one export for every test of this file
  return *shared;
}

TEST(CompilerBisector, InductorBisectRunsItOrSaysItIsNotAvailable) {
  auto [run, record] = zoo().bisect("inductor", "--backend inductor");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto& bisector = record["compiler_bisector"];
  if (listed_as_available("inductor")) {
    // The MLP passes with torch.compile on the CPU: nothing to bisect, nothing said about it.
    EXPECT_EQ(record["verdict"], "nothing_to_bisect") << run.output;
    EXPECT_EQ(bisector["status"], "not_run");
    EXPECT_EQ(bisector["note"], "the model passes");
    EXPECT_THAT(run.output, Not(HasSubstr("compiler bisector")));
    return;
  }
  // Every step fails to run (no torch.compile): the switches found nothing, and the compiler
  // bisector's driver found no bisector in this torch and ran no check.
  EXPECT_EQ(record["verdict"], "fails_without_optimization") << run.output;
  EXPECT_EQ(bisector["status"], "not_available") << bisector.dump(2);
  EXPECT_THAT(bisector["note"].get<std::string>(),
              HasSubstr("has no torch._inductor.compiler_bisector"));
  EXPECT_THAT(bisector["torch"].get<std::string>(), ::testing::StartsWith("1."));
  EXPECT_EQ(bisector["checks"].size(), 0u);
  EXPECT_TRUE(bisector["bisect_number"].is_null());
  EXPECT_THAT(run.output, HasSubstr("Inductor's compiler bisector: not available (torch " +
                                    bisector["torch"].get<std::string>() +
                                    " has no torch._inductor.compiler_bisector); the config "
                                    "switches were bisected instead\n"));
  // The keys bisect.json had before stay.
  for (const char* key : {"model", "suite", "backend", "device", "mode", "switches", "verdict",
                          "culprit", "fix", "steps", "divergence"})
    EXPECT_TRUE(record.contains(key)) << key;
  EXPECT_TRUE(fs::is_regular_file(bisector["log"].get<std::string>()));
}

TEST(CompilerBisector, NoCompilerBisectorSkipsIt) {
  auto [run, record] =
      zoo().bisect("inductor_without", "--backend inductor --no-compiler-bisector");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto& bisector = record["compiler_bisector"];
  EXPECT_EQ(bisector["status"], "not_run") << bisector.dump(2);
  if (listed_as_available("inductor")) {
    EXPECT_EQ(bisector["note"], "the model passes");
    return;
  }
  EXPECT_EQ(bisector["note"], "--no-compiler-bisector");
  EXPECT_THAT(run.output,
              HasSubstr("Inductor's compiler bisector: not run (--no-compiler-bisector)"));
  EXPECT_FALSE(fs::exists(zoo().dir.file("inductor_without") + "/logs/compiler_bisector"));
}

TEST(CompilerBisector, DoesNotApplyToOtherBackends) {
  auto [run, record] = zoo().bisect("jit", "--backend jit");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(record["compiler_bisector"]["status"], "not_applicable");
  EXPECT_THAT(record["compiler_bisector"]["note"].get<std::string>(),
              HasSubstr("jit does not compile with Inductor"));
  EXPECT_THAT(run.output, Not(HasSubstr("compiler bisector")));

  auto help = zt::run_command(zoobench_command("bisect --help"));
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.output, HasSubstr("--no-compiler-bisector"));
  EXPECT_THAT(help.output, HasSubstr("torch._inductor.compiler_bisector"));
}

}  // namespace
