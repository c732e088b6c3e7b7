"""Process-wide state that a TorchBench checkout changes, saved before and put back after, and
what an older torch lacks that the checkout's code uses, supplied only for that time.

Why: one exporter process builds many models. TorchBench's BenchmarkModel.__init__ calls
util/env_check.py:set_random_seed, which replaces torch.manual_seed for the whole process with
a function that ignores its argument and seeds 1337 (and imports torch.xpu, absent in torch
1.13); llama calls torch.set_default_device and never resets it; model packages set cuDNN flags
when imported; the accuracy path turns deterministic algorithms on and sets
CUBLAS_WORKSPACE_CONFIG. Left alone, each of these silently changes every model exported later
in the same process (and the rebuild of a model in Python, which calls a source's build()).

`checkout_scope()` is the one entry point: everything in `_state_items()` is read on entry and
written back on exit, and the shims in `_shims()` exist only inside it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List

import torch

_ABSENT = object()  # an attribute or variable that did not exist


@dataclass(frozen=True)
class StateItem:
    name: str
    read: Callable[[], Any]
    write: Callable[[Any], None]


def _attribute(owner: Any, owner_name: str, attr: str) -> StateItem:
    def write(value):
        if value is _ABSENT:
            if hasattr(owner, attr):
                delattr(owner, attr)
        else:
            setattr(owner, attr, value)

    return StateItem(f"{owner_name}.{attr}", lambda: getattr(owner, attr, _ABSENT), write)


def _environment(variable: str) -> StateItem:
    def write(value):
        if value is _ABSENT:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = value

    return StateItem(f"${variable}", lambda: os.environ.get(variable, _ABSENT), write)


def default_device() -> Any:
    """What torch.set_default_device installed, or None when nothing was (always None before
    torch 2.0, which has no such function)."""
    holder = getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None)
    if holder is not None:
        # torch >= 2.3 keeps it in a threading.local, 2.0-2.2 in the global itself
        context = getattr(holder, "device_context", holder)
        device = getattr(context, "device", None)
        return None if device is None else str(device)
    if hasattr(torch, "get_default_device"):  # a torch that keeps it elsewhere
        device = str(torch.get_default_device())
        return None if device == "cpu" else device
    return None


def _set_default_device(device: Any) -> None:
    if default_device() != device and hasattr(torch, "set_default_device"):
        torch.set_default_device(device)  # None removes it


def _deterministic_algorithms():
    warn_only = getattr(torch, "is_deterministic_algorithms_warn_only_enabled", lambda: False)
    return torch.are_deterministic_algorithms_enabled(), warn_only()


def _set_deterministic_algorithms(value) -> None:
    enabled, warn_only = value
    try:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
    except TypeError:  # a torch without warn_only
        torch.use_deterministic_algorithms(enabled)


def _state_items() -> List[StateItem]:
    items = [_attribute(torch, "torch", f) for f in ("manual_seed", "seed", "initial_seed")]
    items.append(_attribute(torch.random, "torch.random", "manual_seed"))
    items += [_attribute(torch.cuda, "torch.cuda", f) for f in ("manual_seed", "manual_seed_all")]
    items += [_attribute(torch, "torch", f) for f in ("set_default_device", "xpu", "func")]
    items.append(StateItem("default device", default_device, _set_default_device))
    items.append(StateItem("default dtype", torch.get_default_dtype, torch.set_default_dtype))
    cudnn = torch.backends.cudnn
    items += [_attribute(cudnn, "torch.backends.cudnn", flag)
              for flag in ("enabled", "benchmark", "deterministic", "allow_tf32")]
    items.append(_attribute(torch.backends.cuda.matmul, "torch.backends.cuda.matmul",
                            "allow_tf32"))
    if hasattr(torch, "get_float32_matmul_precision"):
        items.append(StateItem("float32 matmul precision", torch.get_float32_matmul_precision,
                               torch.set_float32_matmul_precision))
    items.append(StateItem("deterministic algorithms", _deterministic_algorithms,
                           _set_deterministic_algorithms))
    items.append(StateItem("grad mode", torch.is_grad_enabled, torch.set_grad_enabled))
    items.append(StateItem("intra-op threads", torch.get_num_threads, torch.set_num_threads))
    items.append(_environment("CUBLAS_WORKSPACE_CONFIG"))
    return items


def snapshot() -> Dict[str, Any]:
    """{item name: value} of everything checkout_scope() restores (for tests and messages)."""
    return {item.name: item.read() for item in _state_items()}


# --- what an older torch lacks ------------------------------------------------------------------

def _xpu_stub() -> types.ModuleType:
    # env_check's seed function calls torch.xpu._is_in_bad_fork() and manual_seed_all(); a torch
    # without XPU support has nothing to seed there
    xpu = types.ModuleType("torch.xpu")
    xpu.__doc__ = "zoobench stand-in: this torch has no torch.xpu (no XPU devices)"
    xpu._is_in_bad_fork = lambda: False
    xpu.is_available = lambda: False
    xpu.device_count = lambda: 0
    xpu.manual_seed = lambda seed: None
    xpu.manual_seed_all = lambda seed: None
    xpu.get_device_name = lambda device=None: ""
    return xpu


def _needs_xpu_stub() -> bool:
    if "torch.xpu" in sys.modules:
        return False
    try:
        import importlib

        importlib.import_module("torch.xpu")
        return False
    except ImportError:
        return True


def _functorch_as_torch_func():
    """torch.func arrived in torch 2.0 as functorch's functional API; before that, functorch
    itself offers the same names (vmap, grad, jacrev, functional_call...)."""
    if "torch.func" in sys.modules or hasattr(torch, "func"):
        return None
    try:
        import functorch
    except ImportError:
        return None
    func = types.ModuleType("torch.func")
    func.__doc__ = "zoobench stand-in: functorch's functions under torch 2.0's name"
    for name in dir(functorch):
        if not name.startswith("_"):
            setattr(func, name, getattr(functorch, name))
    if not hasattr(func, "functional_call"):
        try:
            from torch.nn.utils.stateless import functional_call

            func.functional_call = functional_call
        except ImportError:
            pass
    return func


def _default_device_stub(device=None) -> None:
    """torch.set_default_device for a torch < 2.0: the default device there is always the CPU,
    so asking for the CPU changes nothing, and anything else cannot be done."""
    if device is not None and torch.device(device).type != "cpu":
        raise RuntimeError(f"torch {torch.__version__} has no torch.set_default_device; this "
                           f"model asks for {device!r} (use torch >= 2.0, or --device cpu)")


@contextlib.contextmanager
def _shims() -> Iterator[List[str]]:
    """Installs the stand-ins this torch needs; yields their names; removes them afterwards."""
    installed: List[str] = []
    added_modules: List[str] = []
    if _needs_xpu_stub():
        sys.modules["torch.xpu"] = torch.xpu = _xpu_stub()
        added_modules.append("torch.xpu")
        installed.append("torch.xpu")
    func = _functorch_as_torch_func()
    if func is not None:
        sys.modules["torch.func"] = torch.func = func
        added_modules.append("torch.func")
        installed.append("torch.func (functorch)")
    if not hasattr(torch, "set_default_device"):
        torch.set_default_device = _default_device_stub
        installed.append("torch.set_default_device (CPU only)")
    try:
        yield installed
    finally:
        for name in added_modules:
            sys.modules.pop(name, None)
        # the attributes themselves are put back by checkout_scope's state items


@contextlib.contextmanager
def checkout_scope() -> Iterator[List[str]]:
    """Saves the process state, supplies the shims, and on exit (also on an exception) removes
    the shims and writes every saved value back. Yields the names of the shims installed."""
    items = _state_items()
    saved = [(item, item.read()) for item in items]
    try:
        with _shims() as installed:
            yield installed
    finally:
        for item, value in reversed(saved):
            try:
                if item.read() is not value and item.read() != value:
                    item.write(value)
            except Exception:  # noqa: BLE001 - one item failing must not keep the others
                pass
