// Where zoobench's parts are (install_layout.h).
#include "zoobench/util/install_layout.h"

#include <cstdlib>
#include <filesystem>
#include <iterator>

namespace fs = std::filesystem;

namespace zoobench {
namespace {

// The build's own programs: zoobench at its top, the tests, benchmarks and fuzzer in their
// folders. A copy elsewhere in the build folder (a test's scratch folder) is not one of them.
bool built_there(const fs::path& executable, const fs::path& build_dir) {
  const fs::path relative =
      executable.lexically_normal().lexically_relative(build_dir.lexically_normal());
  if (relative.empty()) return false;
  const std::string first = relative.begin()->string();
  return std::distance(relative.begin(), relative.end()) == 1 || first == "tests" ||
         first == "bench" || first == "fuzz";
}

}  // namespace

std::string locate_part(const PartLocation& part, const std::string& executable,
                        const std::string& build_dir) {
  if (const char* value = std::getenv(part.environment); value && *value) return value;
  const fs::path installed =
      (fs::path(executable).parent_path() / part.installed).lexically_normal();
  std::error_code error;
  if (fs::exists(installed, error)) return installed.string();
  if (!build_dir.empty() && !executable.empty() && built_there(executable, build_dir))
    return part.in_build;
  return installed.string();
}

std::string locate_part(const PartLocation& part) {
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  return locate_part(part, error ? std::string() : executable.string(), ZOOBENCH_BUILD_DIR);
}

}  // namespace zoobench
