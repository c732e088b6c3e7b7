// libzoobench_python.so: CPython embedded, and the conversions between zoobench's IValues and
// Python objects (tensors through torch's own wrappers, so a tensor is the same TensorImpl on
// both sides, never a copy).
//
// The interpreter is never finalized: Python's teardown in a process that still holds CUDA
// state and Torch's static objects has nothing to gain and crashes to risk.
#include "zoobench/python/bridge.h"

#include <torch/csrc/autograd/python_variable.h>

#include <string>

namespace py = pybind11;

namespace zoobench::python {
namespace {

std::string first_line_of(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string qualified_name(const py::handle& type) {
  std::string module = py::str(type.attr("__module__"));
  std::string name = py::str(type.attr("__qualname__"));
  return module == "builtins" ? name : module + "." + name;
}

// "<type>: <first line of the message>", then the whole traceback (message included).
BridgeResult python_failure(py::error_already_set& e) {
  BridgeResult result;
  result.ok = false;
  try {
    result.error_type = qualified_name(e.type());
    std::string message = py::str(e.value());
    std::string traceback;
    py::object lines =
        py::module_::import("traceback").attr("format_exception")(e.type(), e.value(), e.trace());
    for (const auto& line : lines) traceback += py::str(line).cast<std::string>();
    result.error = result.error_type + ": " + first_line_of(message) + "\n" + traceback;
  } catch (...) {
    result.error_type = "Exception";
    result.error =
        std::string("Python raised an exception that could not be formatted: ") + e.what();
  }
  return result;
}

BridgeResult cpp_failure(const char* type, const std::string& message) {
  BridgeResult result;
  result.ok = false;
  result.error_type = type;
  result.error = std::string(type) + ": " + message;
  return result;
}

// Runs `body` under the GIL, turning every exception into a failed result.
template <typename Body>
BridgeResult guarded(Body&& body) {
  py::gil_scoped_acquire gil;
  try {
    return body();
  } catch (py::error_already_set& e) {
    return python_failure(e);
  } catch (const c10::Error& e) {
    return cpp_failure("c10::Error", e.what_without_backtrace());
  } catch (const std::exception& e) {
    return cpp_failure("std::exception", e.what());
  }
}

// Both directions by structure, with only libtorch_python's exported wrappers
// (THPVariable_Wrap/Unpack): tensors (shared), tuples, lists, dicts, None, bools, ints, floats,
// strings. torch's own converters (toPyObject, toTypeInferredIValue) are not exported by every
// wheel, need one element type per container and cannot type an empty list.
py::object to_python(const c10::IValue& value) {
  if (value.isNone()) return py::none();
  if (value.isTensor())
    return py::reinterpret_steal<py::object>(THPVariable_Wrap(value.toTensor()));
  if (value.isBool()) return py::bool_(value.toBool());
  if (value.isInt()) return py::int_(value.toInt());
  if (value.isDouble()) return py::float_(value.toDouble());
  if (value.isString()) return py::str(value.toStringRef());
  if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    py::tuple out(elements.size());
    for (std::size_t i = 0; i < elements.size(); ++i) out[i] = to_python(elements[i]);
    return std::move(out);
  }
  if (value.isList()) {
    py::list out;
    for (const auto& element : value.toListRef()) out.append(to_python(element));
    return std::move(out);
  }
  if (value.isGenericDict()) {
    py::dict out;
    for (const auto& item : value.toGenericDict())
      out[to_python(item.key())] = to_python(item.value());
    return std::move(out);
  }
  throw std::runtime_error("zoobench cannot pass a " + value.tagKind() + " to Python");
}

c10::IValue to_ivalue(const py::handle& value) {
  if (value.is_none()) return c10::IValue();
  if (THPVariable_Check(value.ptr())) return c10::IValue(THPVariable_Unpack(value.ptr()));
  if (py::isinstance<py::bool_>(value)) return c10::IValue(value.cast<bool>());
  if (py::isinstance<py::int_>(value)) return c10::IValue(value.cast<int64_t>());
  if (py::isinstance<py::float_>(value)) return c10::IValue(value.cast<double>());
  if (py::isinstance<py::str>(value)) return c10::IValue(value.cast<std::string>());
  if (py::isinstance<py::tuple>(value)) {
    std::vector<c10::IValue> elements;
    for (const auto& element : value) elements.push_back(to_ivalue(element));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (py::isinstance<py::list>(value)) {
    c10::impl::GenericList list(c10::AnyType::get());
    for (const auto& element : value) list.push_back(to_ivalue(element));
    return list;
  }
  if (py::isinstance<py::dict>(value)) {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& item : value.cast<py::dict>()) {
      dict.insert(py::str(item.first).cast<std::string>(), to_ivalue(item.second));
    }
    return dict;
  }
  throw std::runtime_error("zoobench cannot take a " +
                           std::string(py::str(value.get_type().attr("__name__"))) +
                           " from Python (tensors, tuples, lists, dicts, numbers, strings, None)");
}

py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

std::string json_dumps(const py::handle& value) {
  return py::str(py::module_::import("json").attr("dumps")(value));
}

py::object function_of(const std::string& module, const std::string& function) {
  return py::module_::import(module.c_str()).attr(function.c_str());
}

class EmbeddedBridge : public Bridge {
 public:
  std::string start(const std::string& program, const std::string& path) override {
    if (Py_IsInitialized()) return "";
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    // zoobench owns the signals (timeouts, interrupts, crash reports); Python must not take them.
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    std::string failure;
    auto check = [&](PyStatus status, const char* what) {
      if (PyStatus_Exception(status) && failure.empty()) {
        failure = std::string(what) + ": " + (status.err_msg ? status.err_msg : "failed");
      }
    };
    check(PyConfig_SetBytesString(&config, &config.program_name, program.c_str()), "program name");
    char argv0[] = "zoobench";
    char* argv[] = {argv0};
    check(PyConfig_SetBytesArgv(&config, 1, argv), "argv");
    if (failure.empty()) check(Py_InitializeFromConfig(&config), "starting Python");
    PyConfig_Clear(&config);
    if (!failure.empty()) return failure;
    {
      py::gil_scoped_acquire gil;
      try {
        py::module_::import("sys").attr("path").attr("insert")(0, path);
        // torch now, not at the first backend's call: importing torch makes its Python autograd
        // engine the process's engine, and a C++ backward (the eager reference, jit) that runs
        // before that import leaves the Python engine without its CUDA worker queue (an internal
        // assert at the first Python backward on CUDA; PyTorch 2.11, 2026-12-01).
        py::module_::import("torch");
      } catch (py::error_already_set& e) {
        return python_failure(e).error;
      }
    }
    // Give the GIL back: each call takes it for its duration.
    PyEval_SaveThread();
    return "";
  }

  BridgeResult make_object(const std::string& module, const std::string& function,
                           const std::string& json_argument) override {
    return guarded([&] {
      BridgeResult result;
      result.object = function_of(module, function)(json_loads(json_argument)).release().ptr();
      return result;
    });
  }

  BridgeResult call_function_json(const std::string& module, const std::string& function,
                                  const std::string& json_argument) override {
    return guarded([&] {
      BridgeResult result;
      result.json = json_dumps(function_of(module, function)(json_loads(json_argument)));
      return result;
    });
  }

  BridgeResult call(void* object, const char* method,
                    const std::vector<c10::IValue>& arguments) override {
    return guarded([&] {
      py::tuple args(arguments.size());
      for (std::size_t i = 0; i < arguments.size(); ++i) args[i] = to_python(arguments[i]);
      py::object out = py::handle(static_cast<PyObject*>(object)).attr(method)(*args);
      BridgeResult result;
      result.value = to_ivalue(out);
      return result;
    });
  }

  BridgeResult call_json(void* object, const char* method,
                         const std::string& json_argument) override {
    return guarded([&] {
      BridgeResult result;
      result.json = json_dumps(
          py::handle(static_cast<PyObject*>(object)).attr(method)(json_loads(json_argument)));
      return result;
    });
  }

  void release(void* object) override {
    if (object == nullptr || !Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(object));
  }
};

}  // namespace
}  // namespace zoobench::python

extern "C" __attribute__((visibility("default"))) zoobench::python::Bridge*
zoobench_python_bridge() {
  static zoobench::python::EmbeddedBridge bridge;
  return &bridge;
}
