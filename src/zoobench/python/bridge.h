// The interface of libzoobench_python.so, the plugin that holds everything touching CPython
// (plugin/bridge.cpp). zoobench loads it with dlopen on the first use of a Python backend
// (embedded_python.cpp), so zoobench itself links neither libpython nor libtorch_python: where
// Python is missing or broken, every C++ backend still runs and the Python ones say why not.
// Nothing crosses this boundary as an exception: errors come back in BridgeResult.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace zoobench::python {

struct BridgeResult {
  bool ok = true;
  std::string error_type;  // the Python exception's qualified class name, when !ok
  std::string error;       // "<type>: <message>" then Python's traceback, when !ok
  c10::IValue value;       // call()
  std::string json;        // call_json(), call_function_json()
  void* object = nullptr;  // make_object(): a new reference, given back with release()
};

class Bridge {
 public:
  virtual ~Bridge() = default;
  // Starts the interpreter of `program` (a Python executable: its prefix, virtual environment
  // and site-packages are the ones used) with `path` first on sys.path. "" or why it failed.
  virtual std::string start(const std::string& program, const std::string& path) = 0;
  // module.function(json.loads(json_argument)), the result kept.
  virtual BridgeResult make_object(const std::string& module, const std::string& function,
                                   const std::string& json_argument) = 0;
  // json.dumps(module.function(json.loads(json_argument))).
  virtual BridgeResult call_function_json(const std::string& module, const std::string& function,
                                          const std::string& json_argument) = 0;
  // object.method(*arguments), IValues converted both ways (tensors shared).
  virtual BridgeResult call(void* object, const char* method,
                            const std::vector<c10::IValue>& arguments) = 0;
  // json.dumps(object.method(json.loads(json_argument))).
  virtual BridgeResult call_json(void* object, const char* method,
                                 const std::string& json_argument) = 0;
  virtual void release(void* object) = 0;
};

}  // namespace zoobench::python

// The plugin's one exported symbol: its Bridge, alive until the process ends.
extern "C" zoobench::python::Bridge* zoobench_python_bridge();
