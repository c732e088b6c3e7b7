/* The shared libpython as zoobench's model processes embed it (src/zoobench/python/plugin/):
 * started the same way (the interpreter's path as the program name, so that a virtual
 * environment's packages are found; Python leaves the signals alone), then one Python file run
 * in it, for bench/embedded_interpreter.py to time against the python executable running the
 * same file.
 *
 *   host PYTHON SCRIPT [ARGS...]     sys.argv = [SCRIPT, ARGS...]
 */
#include <Python.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PYTHON SCRIPT [ARGS...]\n", argv[0]);
    return 2;
  }
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  PyConfig_SetBytesString(&config, &config.program_name, argv[1]);
  PyConfig_SetBytesArgv(&config, argc - 2, argv + 2);
  PyStatus status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) Py_ExitStatusException(status);
  FILE* script = fopen(argv[2], "r");
  if (!script) {
    perror(argv[2]);
    return 2;
  }
  const int failed = PyRun_SimpleFileEx(script, argv[2], 1);
  return Py_FinalizeEx() < 0 || failed ? 1 : 0;
}
