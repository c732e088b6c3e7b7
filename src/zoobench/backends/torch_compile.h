// The torch.compile family (internal to backends/; the registry makes them): python_eager (the
// zoo model's Python module, uncompiled) and NAME[:MODE], torch.compile with dynamo backend NAME
// and MODE, through the embedded Python (src/zoobench/python/, tools/zoo_compile/).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zoobench/backends/backend.h"

namespace zoobench {

// torch.compile's modes, as `--backend NAME:MODE` takes them.
const std::vector<std::string>& torch_compile_modes();

struct TorchCompileSpec {
  std::string dynamo_backend;  // "inductor", "aot_eager", ...
  std::string mode;            // "" (torch.compile's default) or one of torch_compile_modes()
  std::string name;            // as rows show it: "inductor", "inductor:reduce-overhead"
};

// NAME, NAME:MODE or compile:NAME[:MODE] -> the spec; nullopt for a name of another form (a
// built-in backend's, or text that cannot be a dynamo backend). Throws UsageError for a known
// form with a wrong part (an unknown mode, a mode after a built-in backend's name).
std::optional<TorchCompileSpec> parse_torch_compile_name(
    const std::string& name, const std::vector<std::string>& builtin_names);

std::unique_ptr<Backend> make_python_eager_backend();
std::unique_ptr<Backend> make_torch_compile_backend(const TorchCompileSpec& spec);

// Why the embedded Python's dynamo cannot run `dynamo_backend` because it knows no backend of
// that name ("dynamo has no backend 'X' (it has: ...)"), or nullopt: it knows it, or that cannot
// be asked (no Python, or a torch without torch.compile: unavailable_reason says which).
std::optional<std::string> unknown_dynamo_backend(const std::string& dynamo_backend);

}  // namespace zoobench
