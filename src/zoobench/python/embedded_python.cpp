// Loading the Python plugin (bridge.h) on first use, and the C++ face of its results.
#include "zoobench/python/embedded_python.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "zoobench/python/bridge.h"
#include "zoobench/util/install_layout.h"

#ifndef ZOOBENCH_WITH_PYTHON
#define ZOOBENCH_WITH_PYTHON 0
#endif

namespace zoobench::python {

struct Object::Handle {
  Bridge* bridge = nullptr;
  void* object = nullptr;
  ~Handle() {
    if (bridge) bridge->release(object);
  }
};

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

struct Loaded {
  Bridge* bridge = nullptr;
  std::string failure;  // why there is no bridge
};

// Where things are: beside an installed binary or in its build (util/install_layout.h), each
// overridable from the environment; the Python the build found, or ZOOBENCH_PYTHON.
std::string plugin_path() {
  return locate_part({"ZOOBENCH_PYTHON_PLUGIN", "../lib/zoobench/libzoobench_python.so",
                      ZOOBENCH_PYTHON_PLUGIN_PATH});
}
std::string python_path() { return env_or("ZOOBENCH_PYTHON", ZOOBENCH_PYTHON_EXECUTABLE); }
std::string tools_path() {
  return locate_part({"ZOOBENCH_TOOLS_DIR", "../share/zoobench/tools", ZOOBENCH_TOOLS_DIR});
}

Loaded load() {
  Loaded out;
  if (!ZOOBENCH_WITH_PYTHON) {
    out.failure = std::string("zoobench was built without an embeddable Python (") +
                  ZOOBENCH_PYTHON_MISSING + "); install what is missing and reconfigure the build";
    return out;
  }
  // RTLD_GLOBAL: libpython's symbols must be visible to the extension modules Python imports
  // (torch._C, numpy), which do not link libpython themselves.
  void* library = ::dlopen(plugin_path().c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    const char* error = ::dlerror();
    out.failure =
        "cannot load the Python plugin " + plugin_path() + ": " + (error ? error : "unknown error");
    return out;
  }
  using Factory = Bridge* (*)();
  auto factory = reinterpret_cast<Factory>(::dlsym(library, "zoobench_python_bridge"));
  if (factory == nullptr) {
    out.failure = plugin_path() + " has no zoobench_python_bridge: rebuild zoobench";
    return out;
  }
  Bridge* bridge = factory();
  std::string failure = bridge->start(python_path(), tools_path());
  if (!failure.empty()) {
    out.failure = "the embedded Python (" + python_path() + ") did not start: " + failure;
    return out;
  }
  out.bridge = bridge;
  return out;
}

const Loaded& loaded() {
  static std::once_flag once;
  static Loaded state;
  std::call_once(once, [] { state = load(); });
  return state;
}

Bridge& bridge_or_throw() {
  const Loaded& state = loaded();
  if (state.bridge == nullptr) throw std::runtime_error(state.failure);
  return *state.bridge;
}

const BridgeResult& checked(const BridgeResult& result) {
  if (!result.ok) throw PythonError(result.error_type, result.error);
  return result;
}

nlohmann::json parsed(const std::string& text) { return nlohmann::json::parse(text); }

}  // namespace

std::optional<std::string> unavailable_reason() {
  const Loaded& state = loaded();
  if (state.bridge == nullptr) return state.failure;
  return std::nullopt;
}

std::string interpreter_path() { return python_path(); }

std::string tools_directory() { return tools_path(); }

c10::IValue Object::call(const char* method, const std::vector<c10::IValue>& arguments) const {
  return checked(handle_->bridge->call(handle_->object, method, arguments)).value;
}

nlohmann::json Object::call_json(const char* method, const nlohmann::json& argument) const {
  return parsed(checked(handle_->bridge->call_json(handle_->object, method, argument.dump())).json);
}

Object make_object(const std::string& module, const std::string& function,
                   const nlohmann::json& argument) {
  Bridge& bridge = bridge_or_throw();
  auto handle = std::make_shared<Object::Handle>();
  handle->object = checked(bridge.make_object(module, function, argument.dump())).object;
  handle->bridge = &bridge;
  return Object(std::move(handle));
}

nlohmann::json call_json(const std::string& module, const std::string& function,
                         const nlohmann::json& argument) {
  Bridge& bridge = bridge_or_throw();
  return parsed(checked(bridge.call_function_json(module, function, argument.dump())).json);
}

}  // namespace zoobench::python
