"""zoobench's device gate (src/zoobench/util/device_gate.h) from the Python side.

Several model pipelines share one device; each holds it shared while it runs there, and a timed
section holds it alone. While dynamo and Inductor compile, which they do on the CPU, the process
lets go of its shared hold, so that another pipeline's timed section need not wait for the
compile; the hold is taken back, with the same steps as zoobench's (the turn shared, the device
shared, the turn let go), before the compiled code runs on the device. zoobench hands over the
two descriptors of its hold. The exporter, a process of its own, takes a hold with its own
descriptors (shared_hold) for the part of an export that runs on the device.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from typing import Iterator, Optional, Tuple

# The triggers of dynamo's compile callbacks that compile on the CPU. The others run on the
# device (Triton's autotuning of a kernel's configurations, the recording of a CUDA graph) and
# keep the hold.
CPU_TRIGGERS = ("DYNAMO", "LAZY_BACKWARD")

# Seconds this process spent compiling without its hold, for the model's log.
released_seconds = 0.0


def take(device_fd: int, turn_fd: int) -> None:
    fcntl.flock(turn_fd, fcntl.LOCK_SH)
    fcntl.flock(device_fd, fcntl.LOCK_SH)
    fcntl.flock(turn_fd, fcntl.LOCK_UN)


def drop(device_fd: int) -> None:
    fcntl.flock(device_fd, fcntl.LOCK_UN)


def _trigger_name(args) -> str:
    # torch < 2.7 calls the callbacks without arguments, and only for dynamo's compiles.
    trigger = getattr(args, "callback_trigger", None)
    return getattr(trigger, "name", "DYNAMO")


@contextlib.contextmanager
def released_while_compiling(gate: Optional[Tuple[int, int]], allowed: bool = True) -> Iterator[None]:
    """Within this block, each compile on the CPU runs without the hold whose descriptors `gate`
    gives (None: zoobench holds nothing, a run of one pipeline). `allowed` False keeps the hold
    (a compile that times kernels on the device, max-autotune)."""
    try:
        from torch._dynamo.callback import callback_handler
    except ImportError:  # torch < 2.1: no callbacks, and no torch.compile to wait for
        callback_handler = None
    if gate is None or not allowed or callback_handler is None:
        yield
        return
    device_fd, turn_fd = gate
    state = {"since": None}

    def on_start(args=None) -> None:
        if state["since"] is None and _trigger_name(args) in CPU_TRIGGERS:
            drop(device_fd)
            state["since"] = time.monotonic()

    def on_end(args=None) -> None:
        global released_seconds
        if state["since"] is not None:
            take(device_fd, turn_fd)
            released_seconds += time.monotonic() - state["since"]
            state["since"] = None

    callback_handler.register_start_callback(on_start)
    callback_handler.register_end_callback(on_end)
    try:
        yield
    finally:
        # torch._dynamo.reset() clears the handler's callbacks: ours may be gone already.
        for remove, callback in ((callback_handler.remove_start_callback, on_start),
                                 (callback_handler.remove_end_callback, on_end)):
            try:
                remove(callback)
            except ValueError:
                pass
        on_end()  # never hand zoobench back a hold it does not have


def _open_lock_file(path: str) -> int:
    """As util/lock_file.cpp opens one: created if missing, read-only where it is another
    user's (a GPU's gate is the machine's; flock needs no more)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except PermissionError:
        return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)


@contextlib.contextmanager
def shared_hold(path: Optional[str]) -> Iterator[None]:
    """The device held shared, for a process of its own (the exporter: zoobench passes
    --device-gate PATH), with its own descriptors: never beside a timed section of the run's
    models. None: nothing held."""
    if not path:
        yield
        return
    device_fd = _open_lock_file(path)
    turn_fd = _open_lock_file(path + ".turn")
    try:
        take(device_fd, turn_fd)
        yield
    finally:
        drop(device_fd)
        os.close(turn_fd)
        os.close(device_fd)
