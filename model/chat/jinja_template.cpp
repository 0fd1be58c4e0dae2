#include "model/chat/jinja_template.hpp"

#include "model/chat/jinja_env_source.hpp" // generated from jinja_env.py

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace kvactor::model {

namespace {

// Holds the GIL for its scope, on any thread.
class gil {
public:
  gil() : state_(PyGILState_Ensure()) {}
  ~gil() { PyGILState_Release(state_); }
  gil(const gil&) = delete;
  gil& operator=(const gil&) = delete;

private:
  PyGILState_STATE state_;
};

// Texts cross as UTF-8; bytes that are not UTF-8 travel through Python as
// lone surrogates and come back as they were.
PyObject* to_python(std::string_view s) {
  return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
}

std::optional<std::string> from_python(PyObject* text) {
  PyObject* bytes = PyUnicode_AsEncodedString(text, "utf-8", "surrogateescape");
  if (!bytes)
    return std::nullopt;
  std::string out(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
  Py_DECREF(bytes);
  return out;
}

// The pending Python exception as "Type: message" (and cleared).
std::string take_python_error() {
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  std::string text = "unknown Python error";
  if (value) {
    if (PyObject* s = PyObject_Str(value)) {
      text = from_python(s).value_or(text);
      Py_DECREF(s);
    }
  }
  if (type) {
    if (const char* name = reinterpret_cast<PyTypeObject*>(type)->tp_name)
      text = std::string(name) + ": " + text;
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(trace);
  return text;
}

// The embedded interpreter's two entry points (jinja_env.py), or why there
// are none.
struct interpreter {
  PyObject* compile = nullptr;
  PyObject* render = nullptr;
  std::string error;
};

// Runs jinja_env.py as a module; the GIL is held.
void load_environment(interpreter& it) {
  PyObject* module = PyModule_New("kvactor_jinja_env");
  if (!module) {
    it.error = take_python_error();
    return;
  }
  PyObject* globals = PyModule_GetDict(module); // borrowed
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  if (PyObject* ran = PyRun_String(jinja_env_source, Py_file_input, globals, globals)) {
    Py_DECREF(ran);
    it.compile = PyDict_GetItemString(globals, "compile_template");
    it.render = PyDict_GetItemString(globals, "render");
    Py_XINCREF(it.compile);
    Py_XINCREF(it.render);
  } else {
    it.error = take_python_error() +
               " (chat templates need Jinja2 for Python 3: Debian's python3-jinja2)";
  }
  Py_DECREF(module);
}

std::string did_not_start(const PyStatus& status) {
  std::string why = "Python did not start: ";
  why += status.err_msg ? status.err_msg : "no reason given";
  return why;
}

interpreter start() {
  interpreter it;
  if (Py_IsInitialized()) { // the host application's
    gil held;
    load_environment(it);
    return it;
  }
#if defined(__SANITIZE_ADDRESS__)
  // NOTE: Python's small-object arenas are mmap'ed, where LeakSanitizer does
  // not look for pointers: with plain malloc every object it still holds is
  // seen as reachable (tools/test --asan).
  PyPreConfig preconfig;
  PyPreConfig_InitIsolatedConfig(&preconfig);
  preconfig.allocator = PYMEM_ALLOCATOR_MALLOC;
  if (const PyStatus pre = Py_PreInitialize(&preconfig); PyStatus_Exception(pre)) {
    it.error = did_not_start(pre);
    return it;
  }
#endif
  // NOTE: isolated: no PYTHON* variables, no user site, no signal handlers
  // (kvactor-serve drains on SIGINT and SIGTERM itself), no .pyc written.
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.install_signal_handlers = 0;
  config.write_bytecode = 0;
  const PyStatus status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) {
    it.error = did_not_start(status);
    return it;
  }
  load_environment(it);
  PyEval_SaveThread(); // from here on each call takes the GIL for itself
  return it;
}

const interpreter& embedded() {
  static const interpreter it = start();
  return it;
}

} // namespace

struct jinja_template::handle {
  explicit handle(PyObject* t) : object(t) {}
  ~handle() {
    gil held;
    Py_DECREF(object);
  }
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;

  PyObject* object;
};

result<jinja_template> jinja_template::compile(std::string_view source) {
  const interpreter& it = embedded();
  if (!it.compile)
    return error{it.error};
  gil held;
  PyObject* text = to_python(source);
  if (!text)
    return error_in("template text", take_python_error());
  PyObject* answer = PyObject_CallOneArg(it.compile, text);
  Py_DECREF(text);
  if (!answer)
    return error{take_python_error()};
  // (template, "") or (None, what is wrong)
  PyObject* compiled = PyTuple_GetItem(answer, 0);
  if (compiled == Py_None) {
    std::string why = from_python(PyTuple_GetItem(answer, 1)).value_or("unreadable error");
    Py_DECREF(answer);
    return error{std::move(why)};
  }
  Py_INCREF(compiled);
  Py_DECREF(answer);
  return jinja_template(std::make_shared<const handle>(compiled));
}

result<std::string> jinja_template::render(std::string_view context, std::string_view extra,
                                           std::optional<int64_t> now) const {
  const interpreter& it = embedded();
  gil held;
  PyObject* args[] = {handle_->object, to_python(extra), to_python(context),
                      now ? PyLong_FromLongLong(*now) : Py_NewRef(Py_None)};
  PyObject* answer = nullptr;
  if (args[1] && args[2] && args[3])
    answer = PyObject_Vectorcall(it.render, args, 4, nullptr);
  for (int i = 1; i < 4; ++i)
    Py_XDECREF(args[i]);
  if (!answer)
    return error{take_python_error()};
  // (True, text) or (False, error)
  const bool rendered = PyTuple_GetItem(answer, 0) == Py_True;
  std::optional<std::string> text = from_python(PyTuple_GetItem(answer, 1));
  Py_DECREF(answer);
  if (!text)
    return error_in("rendered text", take_python_error());
  if (!rendered)
    return error{std::move(*text)};
  return std::move(*text);
}

} // namespace kvactor::model
