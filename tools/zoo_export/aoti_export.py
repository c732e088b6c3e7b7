"""AOTInductor packages (aoti.<dtype>.<device>.pt2): torch.export, then
torch._inductor.aoti_compile_and_package. Only with torch >= 2.6.

With --int32-inputs the package's integer inputs are int32 (what a 32-bit-only device feeds
it): the exported wrapper casts them back to int64 inside, and the manifest entry's
`input_contract` says so; the harness stages its int64 inputs through the 64-bit boundary."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from .model_bundle import InputSpec, dtype_name
from .torchscript_export import quiet_warnings, restore_state, snapshot_state

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

# The float32 switches a CUDA package is compiled under (--aoti-numerics). zoobench's performance
# runs compute with TF32 on and cuDNN's benchmark mode off, as upstream's harness does
# (compat::set_deterministic_numerics(false)), and so does torch.compile when zoobench times it. Inductor settles some choices by timing
# candidates under the switches of the moment: pad_mm pads a GEMM whose sizes are not multiples
# of 4 only when the padded one is faster by 1.1x under them. GPT-Neo's package, compiled under
# PyTorch's defaults (matmul TF32 off), ran its unpadded 50,257-wide language-model head as a
# 7.18 ms sm80 kernel where torch.compile's padded GEMM took about 2.5 ms on an H200; these
# switches are the likely reason, not yet measured. "default" keeps the process's switches.
NUMERICS = ("performance", "default")


def _float32_switches():
    return (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
            torch.backends.cudnn.benchmark)


def _set_float32_switches(switches) -> None:
    (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
     torch.backends.cudnn.benchmark) = switches


@contextlib.contextmanager
def compile_numerics(numerics: str, device: str):
    """The float32 switches `numerics` names, for the compile only; the process's are restored.
    Yields what the manifest records."""
    if numerics not in NUMERICS:
        raise ValueError(f"numerics {numerics!r}: expected one of {', '.join(NUMERICS)}")
    if numerics == "default" or device != "cuda":
        yield "default"
        return
    # The same switches zoobench's C++ side sets (setAllowTF32CuBLAS/CuDNN, setBenchmarkCuDNN)
    # before torch.compile compiles in its timed runs; a torch that refuses them (TF32's newer
    # fp32_precision API) compiles under its own, and the manifest says so.
    saved = _float32_switches()
    try:
        _set_float32_switches((True, True, False))
    except (RuntimeError, AttributeError) as e:
        _set_float32_switches(saved)
        yield f"default (could not switch TF32 on: {str(e).splitlines()[0] if str(e) else type(e).__name__})"
        return
    try:
        yield "performance (TF32 on, cuDNN benchmark off)"
    finally:
        _set_float32_switches(saved)


def _compiler_timings() -> Optional[Dict[str, List[float]]]:
    """torch's record of the compiler's timed phases (dynamo_timed: name -> durations), or None
    where this torch keeps none."""
    try:
        import torch._dynamo.utils as dynamo_utils
    except ImportError:
        return None
    metrics = getattr(dynamo_utils, "compilation_time_metrics", None)
    return metrics if isinstance(metrics, dict) else None


def largest_phases(timings: Dict[str, List[float]], count: int = 6) -> Dict[str, float]:
    """Seconds per phase, the `count` largest, largest first. Phases nest (the C++ compile of
    the wrapper, 'compile_file', sits inside the compile of the graph), so they do not add up:
    they say which part is large, not a partition."""
    totals = {name: float(sum(durations)) for name, durations in timings.items() if durations}
    largest = sorted(totals.items(), key=lambda item: -item[1])[:count]
    return {name: round(seconds, 3) for name, seconds in largest}


# torch.export takes a plain tensor attribute (neither a parameter nor a buffer) for a constant.
# TorchBench's llama keeps its KV cache so (`self.cache_k = torch.zeros(...)`, written in place
# in forward). torch 2.11's export accepts that, but the write stays in the program as a copy_
# into the constant, and Inductor's compile of the program then fails with "mutating a
# non-functional tensor with a functional tensor is not allowed" (2026-12-02f: the traceback
# ends in aot_export_module, under aoti_compile_and_package). Registered as non-persistent
# buffers, the same tensors become state a program may mutate, the fix llama's own repository
# took (meta-llama/llama-models#380). Tried only after that failure, in the export or in the
# compile, so that every other package is made from the model as it is; the manifest says so.
MUTATED_CONSTANT = ("mutating a non-functional tensor with a functional tensor",
                    "is mutated in the forward method", "Mutating module attribute")


def _plain_tensor_attributes(module: nn.Module) -> List[Tuple[str, nn.Module, str, torch.Tensor]]:
    """(submodule's dotted prefix, submodule, name, tensor) for each tensor attribute of
    `module` and its submodules that is neither a parameter nor a buffer."""
    return [(prefix, submodule, name, value) for prefix, submodule in module.named_modules()
            for name, value in vars(submodule).items()
            if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter)]


@contextlib.contextmanager
def tensor_attributes_as_buffers(module: nn.Module, device: Optional[torch.device] = None):
    """Plain tensor attributes of `module` and its submodules registered as non-persistent
    buffers (the same tensors: the state_dict does not change); yields their dotted names.
    Afterwards they are plain attributes again, holding what the buffers hold then. With
    `device`, only the attributes on it: a buffer is an input of the package, and one left on
    another device (an attribute forward never moves, such as a table on the CPU beside a model
    on the GPU) would be a CPU tensor handed to a CUDA package's kernels; as a plain attribute,
    torch.export leaves it out where forward does not read it."""
    moved = []
    for prefix, submodule, name, value in _plain_tensor_attributes(module):
        if device is not None and value.device != device:
            continue
        del submodule.__dict__[name]
        submodule.register_buffer(name, value, persistent=False)
        moved.append((prefix, submodule, name))
    try:
        yield [f"{prefix}.{name}" if prefix else name for prefix, _, name in moved]
    finally:
        for _, submodule, name in moved:
            submodule.__dict__[name] = submodule._buffers.pop(name)


@contextlib.contextmanager
def tensor_attributes_kept(module: nn.Module):
    """The plain tensor attributes of `module` and its submodules as they are now, put back on
    leaving. Non-strict torch.export runs forward on the module itself: an attribute forward
    reassigns (llama's `self.cache_k = self.cache_k.to(xq)`) could be left holding a tensor of
    the trace, which the retry would then register, and the exporter's checks run the module
    again after its packages."""
    kept = _plain_tensor_attributes(module)
    try:
        yield
    finally:
        for _, submodule, name, value in kept:
            submodule.__dict__[name] = value


def export_and_compile(program_module: nn.Module, module: nn.Module, args: tuple,
                       compile_program: Callable[[Any], Any]
                       ) -> Tuple[Any, List[str], float, float]:
    """torch.export's program of `program_module` (which calls `module`), given to
    `compile_program`; returns (what that returned, the adaptations it needed: see
    MUTATED_CONSTANT, the export's seconds, the compile's seconds), the seconds those of the
    attempt that counted. The module's plain tensor attributes are the same tensors afterwards,
    whatever forward assigned to them while it was traced."""
    def attempt() -> Tuple[Any, float, float]:
        start = time.monotonic()
        with tensor_attributes_kept(module):
            program = torch.export.export(program_module, args, strict=False)
        exported = time.monotonic()
        compiled = compile_program(program)
        return compiled, exported - start, time.monotonic() - exported

    try:
        compiled, export_s, compile_s = attempt()
        return compiled, [], export_s, compile_s
    except Exception as e:  # noqa: BLE001  (torch.export and Inductor raise many kinds)
        if not any(words in str(e) for words in MUTATED_CONSTANT):
            raise
        first_failure = e
    # kept outside: what the trace assigns to a buffer is what tensor_attributes_as_buffers
    # would hand back as the attribute
    # The package's device is its inputs'.
    device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
    with tensor_attributes_kept(module), tensor_attributes_as_buffers(module, device) as moved:
        if not moved:
            raise first_failure
        compiled, export_s, compile_s = attempt()
    shown = ", ".join(moved[:4]) + (f" and {len(moved) - 4} more" if len(moved) > 4 else "")
    return compiled, [f"tensor attributes registered as buffers, as forward writes into them "
                      f"(torch.export kept them as constants): {shown}"], export_s, compile_s


def unsupported_reason() -> Optional[str]:
    version = torch.__version__.split("+")[0].split(".")
    try:
        major, minor = int(version[0]), int(version[1])
    except (ValueError, IndexError):
        return f"cannot read torch version {torch.__version__}"
    if (major, minor) < (2, 6):
        return f"AOTInductor packages need torch >= 2.6, this is {torch.__version__}"
    inductor = getattr(torch, "_inductor", None)
    if inductor is None:
        try:
            import torch._inductor as inductor  # noqa: F811
        except ImportError as e:
            return f"torch._inductor is not importable: {e}"
    if not hasattr(inductor, "aoti_compile_and_package"):
        return "torch._inductor has no aoti_compile_and_package"
    return None


class Int32Inputs(nn.Module):
    """Takes int32 where the model takes int64 and widens them before calling it."""

    def __init__(self, model: nn.Module, widen: Sequence[int]):
        super().__init__()
        self.model = model
        self.widen = set(widen)

    def forward(self, *inputs: torch.Tensor):
        args = [t.to(torch.int64) if i in self.widen else t for i, t in enumerate(inputs)]
        return self.model(*args)


def export_package(module: nn.Module, inputs: Sequence[torch.Tensor], specs: List[InputSpec],
                   folder: str, device: str, dtype: str, int32_inputs: bool,
                   verbose: bool, inductor_configs: Optional[Dict[str, Any]] = None,
                   numerics: str = "performance") -> Dict[str, Any]:
    """Writes aoti.<dtype>.<device>.pt2; returns its manifest fields (without path/sha256).
    The module's weights are restored afterwards (a float16 round trip would round them).
    `inductor_configs` (torch._inductor.config keys) are compiled into the package: the
    harness cannot change them at run time, so the manifest entry records them."""
    import torch._inductor

    target = DTYPES[dtype]
    filename = f"aoti.{dtype}.{device}.pt2"
    state = snapshot_state(module)
    original_device = next((p.device for p in module.parameters()), torch.device(device))
    try:
        module.eval()
        module.to(device=device)
        if target != torch.float32:
            module.to(dtype=target)
        args: List[torch.Tensor] = []
        widen: List[int] = []
        contract: List[Dict[str, Any]] = []
        for i, (t, spec) in enumerate(zip(inputs, specs)):
            t = t.to(device).clone()  # torch.export may run the model: keep the inputs intact
            if t.is_floating_point() and t.dtype != target:
                t = t.to(target)
            elif int32_inputs and t.dtype == torch.int64:
                t = t.to(torch.int32)
                widen.append(i)
            args.append(t)
            # The package bakes in these strides; the harness assumes contiguous unless told.
            if dtype_name(t.dtype) != spec.dtype or not t.is_contiguous():
                contract.append({"name": spec.name, "dtype": dtype_name(t.dtype),
                                 "sizes": list(t.shape), "strides": list(t.stride())})
        program_module = Int32Inputs(module, widen) if widen else module
        # Where a package's compile goes (about a minute even for a 2 MB model on the H200,
        # 2026-12-02e): torch's own timings, from this package's compile only.
        timings = _compiler_timings()

        def compile_package(program) -> str:  # the numerics it was compiled under
            if timings is not None:
                timings.clear()  # the phases of the compile that counted, not a failed one's
            with compile_numerics(numerics, device) as switches:
                torch._inductor.aoti_compile_and_package(
                    program, package_path=os.path.join(folder, filename),
                    inductor_configs=inductor_configs or None)
            return switches

        with quiet_warnings(verbose), torch.no_grad():
            compiled_under, adaptations, export_s, compile_s = export_and_compile(
                program_module, module, tuple(args), compile_package)
        # The package's cost, split: torch.export's trace and Inductor's compile (AOTInductor's
        # answer to torch.compile's compilation_latency, paid once at export).
        entry: Dict[str, Any] = {"kind": "aoti", "device": device, "dtype": dtype,
                                 "export_s": round(export_s, 3),
                                 "compile_s": round(compile_s, 3),
                                 "numerics": compiled_under}
        if adaptations:
            entry["adaptations"] = adaptations
        if timings:
            entry["compile_phases_s"] = largest_phases(timings)
        if inductor_configs:
            entry["inductor_configs"] = inductor_configs
        if contract:
            entry["input_contract"] = contract
        return entry
    finally:
        if target != torch.float32:
            module.to(dtype=torch.float32)
        module.to(device=original_device)
        restore_state(module, state)
