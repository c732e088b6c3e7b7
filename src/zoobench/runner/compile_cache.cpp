// A run's own compile cache folder.
#include "zoobench/runner/compile_cache.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>

#include "zoobench/backends/backend.h"
#include "zoobench/util/files.h"
#include "zoobench/util/log.h"

namespace fs = std::filesystem;

namespace zoobench {
namespace {

bool compiles(const RunOptions& options) {
  for (const auto& name : options.backends)
    if (is_torch_compile_backend(name)) return true;
  return false;
}

}  // namespace

RunCompileCache::RunCompileCache(const RunOptions& options) {
  if (!compiles(options) || options.keep_compile_cache || options.cold_compile_cache) return;
  if (const char* named = std::getenv("TORCHINDUCTOR_CACHE_DIR"); named && *named) {
    log::info("compile cache: {} (TORCHINDUCTOR_CACHE_DIR)", named);
    return;
  }
  const fs::path base = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  std::string pattern = (base / "zoobench-compile-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    log::warn("compile cache: cannot make a folder in {}; Inductor's own cache is used",
              base.string());
    return;
  }
  folder_ = pattern;
  ::setenv("TORCHINDUCTOR_CACHE_DIR", folder_.c_str(), 1);
  ::setenv("TRITON_CACHE_DIR", (fs::path(folder_) / "triton").c_str(), 1);
  log::info("compile cache: {}, shared by the run's model processes, removed at its end", folder_);
}

RunCompileCache::~RunCompileCache() {
  if (folder_.empty()) return;
  remove_tree(folder_);  // util/files.h says why not std::filesystem's
  ::unsetenv("TORCHINDUCTOR_CACHE_DIR");
  ::unsetenv("TRITON_CACHE_DIR");
}

}  // namespace zoobench
