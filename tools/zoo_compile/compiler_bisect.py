"""Inductor's own compiler bisector (torch._inductor.compiler_bisector) over zoobench's accuracy
check, for `zoobench bisect --backend inductor[:MODE]` (src/zoobench/bisect/compiler_bisector.h).

The bisector finds where a torch.compile failure starts: the first backend stage that fails
(eager, aot_eager, aot_eager_decomp_partition, ..., inductor), then the subsystem of that stage
(a family of graph passes, the lowerings, the decompositions, a config change) whose removal
makes it pass, and for a counted subsystem the number of the application that breaks it (the
n-th lowering) with its debug info (the FX node). Each of its checks here is the model's
accuracy check exactly as a bisect step runs it: the `zoobench run` child command (--row-out)
that the C++ side built, judged by its accuracy row (only `pass` passes, as for the switches).

Two sides of one protocol:
  driver  main(): `python -m zoo_compile.compiler_bisect CONFIG.json`, run by `zoobench bisect`
          with the exporter Python (ZOOBENCH_PYTHON). CompilerBisector.do_bisect(check), where
          check() runs one child in the bisector's current state; then one line,
          RESULT_PREFIX + JSON (result_line), that the C++ side parses.
  child   join_from_environment() and record_counters(), called by session.py in the child's
          embedded Python: point the child's bisector at the driver's state folder, and write
          back what it counted and the debug info it kept.

Why do_bisect with this check, not `python -m torch._inductor.compiler_bisector run CMD`:
  - `run` judges a command by its exit status; `zoobench run` exits 0 whatever the model did
    (the verdict is its row), so `run` would need a wrapper around the child anyway.
  - `run` tells its command the state through TORCH_BISECT_* for test_disable only; in the
    find_max_bounds and bisect states the command's bisector reads files in cache_dir()/bisect
    (PyTorch 2.11-era main; earlier versions kept them in a private temporary folder the
    command never saw, and guessed an upper bound of 1000 applications). A zoobench child
    moves cache_dir() itself: each model compiles in a fresh TORCHINDUCTOR_CACHE_DIR unless
    --keep-compile-cache (session.py), so it would not find them.
  - `run` never sees the debug info (which node, which pass): the command's bisector keeps it
    in memory and exits.
  Here the child is told the folder the driver's bisector really uses (STATE_ENV) and reports
  what it counted and saw (REPORT_ENV): the upper bound is counted, the debug info names the
  node, and the state lives in one private folder per bisect that do_bisect removes at its end.
  The driver's own cache_dir() is a private folder too, so nothing of the user's Inductor cache
  is read or deleted. Only these parts of the bisector are used: do_bisect, get_backend,
  get_subsystem, get_run_state, get_bisect_range, get_dir, BACKENDS, the per-process tables
  subsystem_call_counter and call_counter_debug_info, and in the child in_process_cache and
  bisection_enabled; availability() names what a torch lacks.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

# The line the C++ side looks for (the last one wins; everything else the driver and the
# bisector print is progress for the log).
RESULT_PREFIX = "zoobench-compiler-bisector-result: "
# Set by the driver for each child: the folder whose bisect/ holds the bisector's state, and the
# file the child writes its counters and debug info to.
STATE_ENV = "ZOOBENCH_COMPILER_BISECT_STATE"
REPORT_ENV = "ZOOBENCH_COMPILER_BISECT_REPORT"
# In the child's argv (the config's "argv"), filled in for each check.
BACKEND_SLOT, ROWS_SLOT, LOG_SLOT = "{backend}", "{rows}", "{log}"
# The bisector's own variables: set by a user, they would steer the driver's search and every
# child's bisector past the state this driver gives them.
_BISECTOR_VARIABLES = ("TORCH_BISECT_BACKEND", "TORCH_BISECT_SUBSYSTEM", "TORCH_BISECT_MAX")
_NEEDED = ("do_bisect", "get_backend", "get_subsystem", "get_run_state", "get_bisect_range",
           "get_dir")


def result_line(result: Dict[str, Any]) -> str:
    """The one line the C++ side parses (compiler_bisector.h's kCompilerBisectorResultPrefix)."""
    return RESULT_PREFIX + json.dumps(result, sort_keys=True)


def result(status: str, torch_version: str, note: str = "",
           checks: Optional[List[Dict[str, Any]]] = None, backend: Optional[str] = None,
           subsystem: Optional[str] = None, bisect_number: Optional[int] = None,
           debug_info: Optional[str] = None, config_change: str = "") -> Dict[str, Any]:
    """What the result line carries. status: found (backend, and where the bisector got that
    far subsystem, bisect_number, debug_info, config_change, as its BisectionResult has them),
    no_issue_found, not_available or error (note says why)."""
    return {"status": status, "torch": torch_version, "note": note, "checks": checks or [],
            "backend": backend, "subsystem": subsystem, "bisect_number": bisect_number,
            "debug_info": debug_info, "config_change": config_change}


def check_record(backend: str, subsystem: Optional[str], run_state: Optional[str],
                 zoobench_backend: str) -> Dict[str, Any]:
    """One check in the result, before it runs: the bisector's state (its backend stage, the
    subsystem and its run state, "" while it searches the stages) and what the child runs.
    The check adds status, max_abs, reason (accuracy_outcome), log, seconds and, in the
    bisect and find_max_bounds states, range: [low, high]."""
    return {"backend": backend, "subsystem": subsystem or "", "run_state": run_state or "",
            "zoobench_backend": zoobench_backend}


# --- the child's side (session.py) -----------------------------------------------------------

def join_from_environment() -> None:
    """In a child of the driver (STATE_ENV set): this process's bisector reads the driver's state
    folder whatever cache_dir() becomes (the session's fresh compile cache moves it). Before
    torch.compile is called: in bisection torch.compile takes the bisector's backend."""
    root = os.environ.get(STATE_ENV)
    if not root:
        return
    from torch._inductor.compiler_bisector import CompilerBisector

    CompilerBisector.in_process_cache = root
    CompilerBisector.bisection_enabled = True


def record_counters() -> None:
    """In a child of the driver (REPORT_ENV set): what this process's bisector counted per
    subsystem and the debug info it kept per application number, for the driver."""
    path = os.environ.get(REPORT_ENV)
    if not path:
        return
    from torch._inductor import compiler_bisector

    counters = _bisector_table(compiler_bisector, "subsystem_call_counter") or {}
    debug_info = _bisector_table(compiler_bisector, "call_counter_debug_info") or {}
    _write_json(path, {"counters": {str(k): int(v) for k, v in counters.items()},
                       "debug_info": {str(k): str(v) for k, v in debug_info.items()}})


def _bisector_table(bisector, name: str) -> Optional[Dict[Any, Any]]:
    """The bisector's per-process table `name` (application counts, debug info): a module
    global in the versions read for this (up to 2.11-era main), looked for on CompilerBisector
    too."""
    for owner in (bisector, getattr(bisector, "CompilerBisector", None)):
        table = getattr(owner, name, None)
        if isinstance(table, dict):
            return table
    return None


# --- the driver ------------------------------------------------------------------------------

def availability():
    """(the bisector module or None, torch's version, why it cannot be used or "")."""
    try:
        import torch
    except ImportError as e:
        return None, "", f"this Python ({sys.executable}) cannot import torch: {e}"
    version = str(torch.__version__)
    try:
        from torch._inductor import compiler_bisector
    except ModuleNotFoundError as e:
        if e.name in ("torch._inductor", "torch._inductor.compiler_bisector"):
            return None, version, f"torch {version} has no torch._inductor.compiler_bisector"
        return None, version, f"torch._inductor.compiler_bisector does not import: {e}"
    except ImportError as e:
        return None, version, f"torch._inductor.compiler_bisector does not import: {e}"
    bisector = getattr(compiler_bisector, "CompilerBisector", None)
    missing = [name for name in _NEEDED if not hasattr(bisector, name)]
    if bisector is None or missing or not hasattr(compiler_bisector, "BACKENDS"):
        return None, version, (f"torch {version}'s compiler bisector lacks what zoobench drives: "
                               f"CompilerBisector.{', '.join(missing) or 'BACKENDS'}")
    return compiler_bisector, version, ""


def zoobench_backend(stage: str, inductor_backend: str) -> str:
    """The zoobench backend a check runs for the bisector's backend `stage`: the user's own for
    inductor (its mode kept), dynamo's backend of that name for the others (compile:eager, not
    zoobench's TorchScript eager)."""
    return inductor_backend if stage == "inductor" else "compile:" + stage


def child_argv(template: List[str], backend: str, rows: str, log: str) -> List[str]:
    slots = {BACKEND_SLOT: backend, ROWS_SLOT: rows, LOG_SLOT: log}
    return [slots.get(part, part) for part in template]


def accuracy_outcome(rows_path: str, exit_code: Optional[int], timeout_s: float,
                     log: str) -> Dict[str, str]:
    """A check's status, max_abs and reason: the child's accuracy row, or what its end implies
    (as zoobench's worker pool names it: timeout, crash, infra_error)."""
    if exit_code is None:
        return {"status": "timeout", "max_abs": "",
                "reason": f"no result within {timeout_s:g} s (killed); log: {log}"}
    try:
        with open(rows_path) as f:
            rows = json.load(f).get("rows", [])
    except (OSError, ValueError):
        rows = []
    for row in rows:
        if row.get("kind") == "accuracy":
            cells = row.get("cells", {})
            return {"status": str(cells.get("accuracy", "")) or "infra_error",
                    "max_abs": str(cells.get("max_abs", "")),
                    "reason": str(cells.get("reason", ""))}
    if exit_code < 0:
        return {"status": "crash", "max_abs": "",
                "reason": f"killed by {signal.Signals(-exit_code).name}; log: {log}"}
    return {"status": "infra_error", "max_abs": "",
            "reason": f"exited with status {exit_code} without an accuracy row; log: {log}"}


class ChildCheck:
    """The bisector's test function: one accuracy check of the model per call, as a zoobench
    child in the bisector's current state; True when it passes."""

    def __init__(self, bisector, config: Dict[str, Any], environment: Dict[str, str]):
        self.bisector = bisector
        self.template = list(config["argv"])
        self.inductor_backend = config["inductor_backend"]
        self.timeout_s = float(config.get("timeout_s") or 0)
        self.logs_dir = config["logs_dir"]
        self.environment = environment
        self.checks: List[Dict[str, Any]] = []
        self.debug_info: Dict[int, str] = {}  # application number -> debug info, from children
        # (backend, subsystem, run state) -> the number of the check that answered it, for the
        # states whose answer cannot change: a stage, a subsystem all off. do_bisect asks them
        # again: when no subsystem of a failing stage fixes it, it walks the rest of the list
        # once more from each (n(n+1)/2 checks, 45 for inductor's nine), each a full compile.
        self.answered: Dict[tuple, int] = {}
        self.child: Optional[subprocess.Popen] = None

    def __call__(self) -> bool:
        cb = self.bisector.CompilerBisector
        stage = cb.get_backend()
        subsystem = cb.get_subsystem()
        run_state = cb.get_run_state(stage, subsystem) if subsystem else None
        step = check_record(stage, subsystem, run_state,
                            zoobench_backend(stage, self.inductor_backend))
        if run_state == "bisect":
            step["range"] = list(cb.get_bisect_range(stage, subsystem))
        key = (stage, subsystem or "", run_state or "")
        if run_state in (None, "test_disable") and key in self.answered:
            earlier = self.checks[self.answered[key] - 1]
            print(f"check: {_describe(step)} again: the answer of check {self.answered[key]}, "
                  f"{earlier['status']}", flush=True)
            return earlier["status"] == "pass"
        number = len(self.checks) + 1
        self.answered[key] = number
        stem = os.path.join(self.logs_dir, f"check{number:02d}")
        log, rows, report = stem + ".log", stem + ".rows.json", stem + ".counters.json"
        for path in (rows, report):
            if os.path.exists(path):
                os.remove(path)
        environment = dict(self.environment)
        # The folder the bisector's files are in (its get_dir() is <that>/bisect), whichever
        # way this version of do_bisect chose it.
        environment[STATE_ENV] = os.path.dirname(cb.get_dir())
        environment[REPORT_ENV] = report
        print(f"check {number}: {_describe(step)} ...", flush=True)
        start = time.monotonic()
        exit_code = self._run(child_argv(self.template, step["zoobench_backend"], rows, log),
                              environment, log)
        step["seconds"] = round(time.monotonic() - start, 3)
        step.update(accuracy_outcome(rows, exit_code, self.timeout_s, log))
        step["log"] = log
        if run_state == "find_max_bounds":
            try:  # the child counted the applications and wrote the range
                step["range"] = list(cb.get_bisect_range(stage, subsystem))
            except RuntimeError:
                pass
        self._take_debug_info(report)
        for path in (rows, report):
            if os.path.exists(path):
                os.remove(path)
        self.checks.append(step)
        print(f"check {number}: {step['status']}"
              + (f", max_abs {step['max_abs']}" if step["max_abs"] else ""), flush=True)
        return step["status"] == "pass"

    def stop(self) -> None:
        """Ends the running child and everything it started (its own session)."""
        child = self.child
        if child is None or child.poll() is not None:
            return
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(child.pid, sig)
            except ProcessLookupError:
                return
            try:
                child.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue

    def _run(self, argv: List[str], environment: Dict[str, str], log: str) -> Optional[int]:
        """The child's exit status (negative: killed by that signal), None on a timeout."""
        with open(log, "ab") as out:
            # A session of its own: a timeout ends the child and the compile workers it started,
            # not this driver. The driver's SIGTERM handler ends it when zoobench bisect stops.
            self.child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                          env=environment, start_new_session=True)
            try:
                return self.child.wait(timeout=self.timeout_s or None)
            except subprocess.TimeoutExpired:
                self.stop()
                return None
            finally:
                self.child = None

    def _take_debug_info(self, report: str) -> None:
        """The child's debug info, here and in the bisector's own table, which do_bisect reads for
        its result once the search ends (its children are other processes)."""
        try:
            with open(report) as f:
                children = json.load(f)
        except (OSError, ValueError):
            return
        table = _bisector_table(self.bisector, "call_counter_debug_info")
        for key, info in children.get("debug_info", {}).items():
            self.debug_info[int(key)] = info
            if table is not None:
                table[int(key)] = info


def _describe(step: Dict[str, Any]) -> str:
    parts = [step["backend"]]
    if step["subsystem"]:
        parts += [step["subsystem"], step["run_state"]]
    if "range" in step:
        parts.append("[{}, {}]".format(*step["range"]))
    return " ".join(parts) + f" ({step['zoobench_backend']})"


def _config_change(bisector, stage: str, subsystem: Optional[str]) -> str:
    """"inductor.layout_optimization=False" when `subsystem` of `stage` is a config change."""
    for candidate in bisector.BACKENDS.get(stage, []):
        if getattr(candidate, "name", None) == subsystem and hasattr(candidate, "config_field"):
            return f"{candidate.config_name}.{candidate.config_field}={candidate.config_value!r}"
    return ""


def bisect(config: Dict[str, Any], child_environment: Dict[str, str]) -> Dict[str, Any]:
    """The search, as the JSON the result line carries."""
    bisector, version, why_not = availability()
    if bisector is None:
        return result("not_available", version, why_not)
    os.makedirs(config["logs_dir"], exist_ok=True)
    check = ChildCheck(bisector, config, child_environment)

    def on_signal(signum, _frame):
        check.stop()
        print(f"stopped by {signal.Signals(signum).name}", flush=True)
        sys.exit(130)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        found = bisector.CompilerBisector.do_bisect(check)
    except Exception as e:  # the bisector's own refusals (a check that passed in find_max_bounds)
        return result("error", version, f"{type(e).__name__}: {e}", check.checks)
    if found is None:
        return result("no_issue_found", version,
                      "every backend the bisector tries passed: the failure did not reproduce",
                      check.checks)
    debug_info = found.debug_info
    if debug_info is None and found.bisect_number is not None:
        debug_info = check.debug_info.get(found.bisect_number)
    return result("found", version, "", check.checks, backend=found.backend,
                  subsystem=found.subsystem, bisect_number=found.bisect_number,
                  debug_info=None if debug_info is None else str(debug_info),
                  config_change=_config_change(bisector, found.backend, found.subsystem))


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m zoo_compile.compiler_bisect CONFIG.json", file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        config = json.load(f)
    for name in _BISECTOR_VARIABLES:
        os.environ.pop(name, None)
    # Children get the environment as it came (plus the config's: a pinned GPU), not the
    # private cache folder below.
    child_environment = dict(os.environ)
    for assignment in config.get("environment", []):
        name, _, value = assignment.partition("=")
        child_environment[name] = value
    private = tempfile.mkdtemp(prefix="zoobench-compiler-bisect-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = private
    try:
        outcome = bisect(config, child_environment)
    except Exception as e:
        outcome = result("error", "", f"{type(e).__name__}: {e}")
    finally:
        shutil.rmtree(private, ignore_errors=True)
    print(result_line(outcome), flush=True)
    return 0


def _write_json(path: str, value: Any) -> None:
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        json.dump(value, f)
    os.replace(temporary, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
