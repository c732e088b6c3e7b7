// The backend registry: every backend zoobench ships, by name.
#include <functional>

#include "zoobench/backends/backend.h"
#include "zoobench/backends/builtin_backends.h"
#include "zoobench/util/errors.h"
#include "zoobench/util/text.h"

namespace zoobench {
namespace {

struct Entry {
  std::string name;
  std::function<std::unique_ptr<Backend>()> make;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {"eager", make_eager_backend},
      {"jit", make_jit_backend},
      {"cudagraphs", make_cudagraphs_backend},
      {"aot_inductor", make_aot_inductor_backend},
  };
  return kEntries;
}

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& entry : entries()) {
    if (entry.name == name) return entry.make();
    names.push_back(entry.name);
  }
  throw UsageError("unknown backend '" + name + "'; available: " + join(names, ", "));
}

std::vector<std::pair<std::string, std::string>> list_backends() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : entries()) out.emplace_back(entry.name, entry.make()->description());
  return out;
}

}  // namespace zoobench
