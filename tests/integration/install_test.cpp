// `make install` (cmake --install) into a prefix, the prefix moved, and the installed zoobench
// run from another folder: it exports and checks a demo model with jit and python_eager from the
// parts beside it. A lone copy of the binary finds no parts and names where it looked.
#include "integration_helpers.h"

namespace zoobench::integration {
namespace {

// The variables that would point zoobench at parts other than its own.
const char* const kNoOverrides =
    "env -u ZOOBENCH_SUITES -u ZOOBENCH_TOOLS_DIR -u ZOOBENCH_PYTHON_PLUGIN ";

TEST(Install, AMovedPrefixRunsTheDemoFromAnotherFolder) {
  zt::ScratchDir dir;
  const std::string prefix = dir.file("prefix"), moved = dir.file("moved"),
                    elsewhere = dir.file("elsewhere");
  auto install = zt::run_command("cmake --install " + quote(zt::binary_dir()) + " --prefix " +
                                 quote(prefix) + " > /dev/null");
  ASSERT_EQ(install.exit_code, 0) << install.output;
  fs::rename(prefix, moved);
  fs::create_directories(elsewhere);
  auto run = zt::run_command(
      "cd " + quote(elsewhere) + " && " + kNoOverrides + quote(moved + "/bin/zoobench") +
      " run --suite demo --only squeezenet1_1 --backend jit,python_eager --accuracy --devices cpu "
      "--zoo zoo --output-directory out --timeout 300");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* backend : {"jit", "python_eager"}) {
    auto rows =
        read_csv(elsewhere + "/out/demo_" + backend + "_inference_float32_cpu_accuracy.csv");
    ASSERT_EQ(rows.size(), 1u) << backend << "\n" << run.output;
    EXPECT_EQ(rows[0].at("accuracy"), "pass") << backend << ": " << rows[0].at("reason");
  }
  EXPECT_TRUE(fs::exists(elsewhere + "/zoo/demo/squeezenet1_1/manifest.json"));

  // The binary alone, outside any build: no plugin, no suites, and the paths it looked at.
  fs::create_directories(dir.file("lone/bin"));
  fs::copy_file(moved + "/bin/zoobench", dir.file("lone/bin/zoobench"));
  auto lone = zt::run_command("cd " + quote(elsewhere) + " && " + kNoOverrides +
                              quote(dir.file("lone/bin/zoobench")) + " list --backends");
  EXPECT_THAT(lone.output, HasSubstr(dir.file("lone/lib/zoobench/libzoobench_python.so")))
      << lone.output;
  auto lone_run = zt::run_command("cd " + quote(elsewhere) + " && " + kNoOverrides +
                                  quote(dir.file("lone/bin/zoobench")) +
                                  " run --suite demo --accuracy --devices cpu --zoo zoo2");
  EXPECT_NE(lone_run.exit_code, 0) << lone_run.output;
  EXPECT_THAT(lone_run.output, HasSubstr(dir.file("lone/share/zoobench/suites")))
      << lone_run.output;
}

}  // namespace
}  // namespace zoobench::integration
