// CPython embedded in zoobench, for the backends whose compiler lives in Python (torch.compile):
// one interpreter per process, the one the build found (ZOOBENCH_PYTHON), so that its
// `import torch` loads the very LibTorch zoobench links and tensors pass between C++ and Python
// without a copy. Nothing here includes Python or pybind11 headers: only embedded_python.cpp does.
//
// Threads: every call takes the GIL for its duration and gives it back, so no Python code runs
// while C++ works, and C++ never waits on the GIL while holding anything Python needs.
#pragma once

#include <ATen/core/ivalue.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zoobench::python {

// An exception raised in Python. what() is "<type>: <message>" on its first line (what a result
// row keeps) and Python's traceback after it (what the model's log keeps).
class PythonError : public std::runtime_error {
 public:
  PythonError(std::string type, const std::string& what)
      : std::runtime_error(what), type_(std::move(type)) {}
  // The exception's qualified class name, e.g. "torch._dynamo.exc.BackendCompilerFailed".
  const std::string& type() const { return type_; }

 private:
  std::string type_;
};

// Why Python cannot run in this process (zoobench built without an embeddable Python, or the
// interpreter failed to start), or nullopt. The first call starts the interpreter.
std::optional<std::string> unavailable_reason();

// The interpreter zoobench embeds (its executable path, for messages, and for tools that run
// it as a process of its own: `zoobench bisect`'s compiler bisector).
std::string interpreter_path();
// The folder the embedded Python imports zoobench's modules from (tools/: zoo_compile).
std::string tools_directory();

// A Python object held by C++. Copies share the object; the last one releases it (under the GIL).
class Object {
 public:
  // Calls `object.method(*arguments)`: IValues become Python objects (tensors shared, tuples,
  // lists, dicts, numbers, strings, None) and the result comes back as an IValue (its type
  // inferred: tensors, tuples, lists, str-keyed dicts of those, numbers, strings, None).
  // Throws PythonError.
  c10::IValue call(const char* method, const std::vector<c10::IValue>& arguments = {}) const;
  // For settings and facts: `object.method(json_argument)` with a JSON value passed as the
  // Python value json.loads gives, and the result returned as json.dumps would write it.
  nlohmann::json call_json(const char* method, const nlohmann::json& argument = nullptr) const;

  struct Handle;  // the pybind11 object, inside embedded_python.cpp
  explicit Object(std::shared_ptr<Handle> handle) : handle_(std::move(handle)) {}

 private:
  std::shared_ptr<Handle> handle_;
};

// `module.function(json_argument)`, its result kept as an Object (e.g. a model session).
// Throws PythonError, or std::runtime_error with unavailable_reason() when Python cannot run.
Object make_object(const std::string& module, const std::string& function,
                   const nlohmann::json& argument);

// `module.function(json_argument)` with a JSON result.
nlohmann::json call_json(const std::string& module, const std::string& function,
                         const nlohmann::json& argument = nullptr);

}  // namespace zoobench::python
