// The backend registry: every backend zoobench ships, by name. A new backend is one entry in
// kEntries (or, for a torch.compile backend, nothing at all: any name dynamo knows works).
#include <functional>

#include "zoobench/backends/backend.h"
#include "zoobench/backends/builtin_backends.h"
#include "zoobench/backends/torch_compile.h"
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
      {"python_eager", make_python_eager_backend},
  };
  return kEntries;
}

std::vector<std::string> entry_names() {
  std::vector<std::string> names;
  for (const auto& entry : entries()) names.push_back(entry.name);
  return names;
}

// The torch.compile forms `zoobench list --backends` shows, beside the entries.
const std::vector<std::string>& torch_compile_examples() {
  static const std::vector<std::string> kExamples = {
      "inductor", "inductor:reduce-overhead", "inductor:max-autotune",
      "inductor:max-autotune-no-cudagraphs", "aot_eager"};
  return kExamples;
}

}  // namespace

std::vector<std::string> Backend::needed_artifacts(Mode mode, Precision,
                                                   const std::string&) const {
  if (mode == Mode::kTraining) return {"eval", "train"};
  return {"eval"};
}

std::optional<std::string> Backend::unsupported_run(Mode, Precision, const std::string&) const {
  return unavailable_reason();
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  for (const auto& entry : entries()) {
    if (entry.name == name) return entry.make();
  }
  if (auto spec = parse_torch_compile_name(name, entry_names()))
    return make_torch_compile_backend(*spec);
  throw UsageError("unknown backend '" + name + "'; available: " + join(entry_names(), ", ") +
                   ", or a torch.compile backend NAME[:MODE] (inductor, inductor:reduce-overhead, "
                   "aot_eager, ...; "
                   "`zoobench list --backends` shows them)");
}

std::optional<std::string> dynamo_backend_of(const std::string& name) {
  for (const auto& entry : entries()) {
    if (entry.name == name) return std::nullopt;
  }
  if (auto spec = parse_torch_compile_name(name, entry_names())) return spec->dynamo_backend;
  return std::nullopt;
}

bool is_torch_compile_backend(const std::string& name) { return dynamo_backend_of(name).has_value(); }

std::string eager_reference_backend(const std::string& eager_reference) {
  return eager_reference == "python" ? "python_eager" : "eager";
}

std::string resolve_eager_reference(const std::vector<std::string>& backends) {
  for (const auto& name : backends) {
    if (make_backend(name)->family() == "zoobench") return "torchscript";
  }
  return "python";
}

void require_known_backend(const std::string& name) {
  const auto dynamo_backend = dynamo_backend_of(name);
  if (!dynamo_backend) return;
  if (auto why = unknown_dynamo_backend(*dynamo_backend)) {
    throw UsageError("--backend " + name + ": " + *why);
  }
}

void require_runnable_backends(const std::vector<std::string>& names, Mode mode,
                               Precision precision, const std::string& device_type) {
  std::vector<std::string> refusals;
  for (const auto& name : names) {
    require_known_backend(name);
    if (auto why = make_backend(name)->unsupported_run(mode, precision, device_type))
      refusals.push_back("--backend " + name + " cannot run here: " + *why);
  }
  if (refusals.empty()) return;
  throw UsageError(join(refusals, "\n") +
                   "\n(nothing was started; `zoobench list --backends` shows what can run here)");
}

std::vector<BackendListing> list_backends(bool probe_python) {
  std::vector<BackendListing> out;
  auto add = [&](const std::string& name) {
    auto backend = make_backend(name);
    BackendListing listing{backend->name(), backend->description(), std::nullopt};
    const bool needs_python =
        std::find(torch_compile_examples().begin(), torch_compile_examples().end(), name) !=
            torch_compile_examples().end() ||
        name == "python_eager";
    if (probe_python || !needs_python) listing.unavailable = backend->unavailable_reason();
    out.push_back(std::move(listing));
  };
  for (const auto& entry : entries()) add(entry.name);
  for (const auto& name : torch_compile_examples()) add(name);
  return out;
}

}  // namespace zoobench
