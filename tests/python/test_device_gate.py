"""tools/zoo_compile/device_gate.py: the Python side of zoobench's device gate.

- A compile on the CPU (dynamo's callbacks with the DYNAMO or LAZY_BACKWARD trigger, or no
  argument as torch < 2.7 calls them) lets go of the hold and takes it back when it ends;
  Triton's autotuning and CUDA-graph recording (they run on the device) keep it; a compile that
  times kernels (allowed False) keeps it. The callbacks are dynamo's own handler where this
  torch has one (torch >= 2.1), a stand-in of the same interface otherwise.
- The exporter's hold (shared_hold) keeps a timed section (zoobench's exclusive steps, done here
  with fcntl as util/device_gate.cpp does them) out, in another process.
"""

import fcntl
import multiprocessing
import os
import sys
import tempfile
import time
import types
import unittest

from helpers import REPO_ROOT  # noqa: F401  (puts tools/ on the path)
from zoo_compile import device_gate


class StandInHandler:
    """torch._dynamo.callback's CompilationCallbackHandler, as far as device_gate uses it."""

    def __init__(self):
        self.start_callbacks, self.end_callbacks = [], []

    def register_start_callback(self, callback):
        self.start_callbacks.append(callback)

    def register_end_callback(self, callback):
        self.end_callbacks.append(callback)

    def remove_start_callback(self, callback):
        self.start_callbacks.remove(callback)

    def remove_end_callback(self, callback):
        self.end_callbacks.remove(callback)

    def compile(self, trigger=None, fail=False):
        args = None if trigger is None else types.SimpleNamespace(
            callback_trigger=types.SimpleNamespace(name=trigger), compile_id="0/0")
        for callback in self.start_callbacks:
            callback() if args is None else callback(args)
        try:
            if fail:
                raise RuntimeError("the compile failed")
        finally:
            for callback in self.end_callbacks:
                callback() if args is None else callback(args)


def handler():
    """dynamo's own handler, or a stand-in module put where device_gate looks for it."""
    try:
        from torch._dynamo.callback import callback_handler
        return callback_handler, None
    except ImportError:
        stand_in = StandInHandler()
        module = types.ModuleType("torch._dynamo.callback")
        module.callback_handler = stand_in
        saved = {name: sys.modules.get(name) for name in ("torch._dynamo", "torch._dynamo.callback")}
        sys.modules.setdefault("torch._dynamo", types.ModuleType("torch._dynamo"))
        sys.modules["torch._dynamo.callback"] = module
        return stand_in, saved


def run_compile(callback_handler, trigger=None, fail=False):
    if isinstance(callback_handler, StandInHandler):
        callback_handler.compile(trigger, fail)
        return
    from torch._dynamo.callback import CallbackArgs, CallbackTrigger  # torch >= 2.7
    args = CallbackArgs(getattr(CallbackTrigger, trigger or "DYNAMO"), "0/0")
    callback_handler.run_start_callbacks(args)
    try:
        if fail:
            raise RuntimeError("the compile failed")
    finally:
        callback_handler.run_end_callbacks(args)


def exclusive_is_free(path):
    """Whether a timed section (util/device_gate.cpp's steps) would get the device now."""
    device_fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(device_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(device_fd, fcntl.LOCK_UN)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(device_fd)


class ReleasedWhileCompiling(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, ".device-gate-cuda.lock")
        self.device_fd = os.open(self.path, os.O_RDWR | os.O_CREAT)
        self.turn_fd = os.open(self.path + ".turn", os.O_RDWR | os.O_CREAT)
        device_gate.take(self.device_fd, self.turn_fd)  # zoobench's hold around warm_up
        self.handler, self.saved = handler()

    def tearDown(self):
        os.close(self.device_fd)
        os.close(self.turn_fd)
        self.folder.cleanup()
        if self.saved is not None:
            for name, module in self.saved.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module

    def gate(self):
        return (self.device_fd, self.turn_fd)

    def test_a_compile_on_the_cpu_runs_without_the_hold_and_gives_it_back(self):
        triggers = ["DYNAMO", "LAZY_BACKWARD"]
        if isinstance(self.handler, StandInHandler):
            triggers.append(None)  # torch < 2.7 calls the callbacks without arguments
        for trigger in triggers:
            seen = []
            with device_gate.released_while_compiling(self.gate()):
                # Registered after device_gate's own callback, so it looks after the release.
                self.handler.register_start_callback(
                    lambda *a: seen.append(exclusive_is_free(self.path)))
                try:
                    run_compile(self.handler, trigger)
                finally:
                    self.handler.start_callbacks.pop()
                self.assertFalse(exclusive_is_free(self.path), f"{trigger}: not taken back")
            self.assertEqual(seen, [True], f"{trigger}: the device was held while it compiled")
        self.assertFalse(exclusive_is_free(self.path))

    def test_work_on_the_device_keeps_the_hold(self):
        seen = []
        with device_gate.released_while_compiling(self.gate()):
            self.handler.register_start_callback(lambda *a: seen.append(exclusive_is_free(self.path)))
            try:
                run_compile(self.handler, "TRITON_AUTOTUNING")
                run_compile(self.handler, "CUDAGRAPH_RECORDING")
            finally:
                self.handler.start_callbacks.pop()
        self.assertEqual(seen, [False, False])

    def test_a_compile_that_times_kernels_keeps_the_hold(self):
        seen = []
        with device_gate.released_while_compiling(self.gate(), allowed=False):
            self.handler.register_start_callback(lambda *a: seen.append(exclusive_is_free(self.path)))
            try:
                run_compile(self.handler, "DYNAMO")
            finally:
                self.handler.start_callbacks.pop()
        self.assertEqual(seen, [False])

    def test_a_failed_compile_gives_the_hold_back_and_callbacks_go(self):
        callbacks = (len(self.handler.start_callbacks), len(self.handler.end_callbacks))
        with self.assertRaises(RuntimeError):
            with device_gate.released_while_compiling(self.gate()):
                run_compile(self.handler, "DYNAMO", fail=True)
        self.assertFalse(exclusive_is_free(self.path))
        self.assertEqual((len(self.handler.start_callbacks), len(self.handler.end_callbacks)),
                         callbacks)

    def test_without_a_hold_nothing_changes(self):
        with device_gate.released_while_compiling(None):
            run_compile(self.handler, "DYNAMO")
        self.assertFalse(exclusive_is_free(self.path))


def _hold_for(path, seconds, ready):
    with device_gate.shared_hold(path):
        ready.set()
        time.sleep(seconds)


class SharedHold(unittest.TestCase):
    def test_a_timed_section_waits_for_the_exporters_hold(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, ".device-gate-cuda.lock")
            ready = multiprocessing.Event()
            exporter = multiprocessing.Process(target=_hold_for, args=(path, 1.0, ready))
            exporter.start()
            self.assertTrue(ready.wait(30))
            self.assertFalse(exclusive_is_free(path))
            exporter.join(30)
            self.assertTrue(exclusive_is_free(path))

    def test_no_path_holds_nothing(self):
        with device_gate.shared_hold(None):
            pass


if __name__ == "__main__":
    unittest.main()
