"""TorchScript artifacts: eval.pt (eval mode) and train.pt (train mode), traced or scripted,
saved, loaded back and checked against the Python model on the saved inputs."""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from .model_bundle import ExportableModel, flatten_outputs, seed_everything


class ExportError(Exception):
    """An artifact could not be made or does not reproduce the model."""


@dataclass
class Check:
    outputs: int
    max_abs_diff: float

    def to_json(self) -> Dict[str, Any]:
        return {"outputs": self.outputs, "max_abs_diff": self.max_abs_diff}


@contextlib.contextmanager
def quiet_warnings(verbose: bool):
    if verbose:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def clone_all(inputs: Sequence[torch.Tensor]) -> Tuple[torch.Tensor, ...]:
    return tuple(t.clone() for t in inputs)


def run_module(module, inputs: Sequence[torch.Tensor], grad: bool):
    """Runs on clones, seeded, so that ops drawing random numbers (detection samplers, kept
    dropout) see the same generator state in the Python model and in the loaded file."""
    clones = clone_all(inputs)
    seed_everything()
    with torch.set_grad_enabled(grad):
        out = module(*clones)
    return out, clones


def detach_all(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return out.detach()
    if isinstance(out, dict):
        return {k: detach_all(v) for k, v in out.items()}
    if isinstance(out, tuple):
        return tuple(detach_all(v) for v in out)
    if isinstance(out, list):
        return [detach_all(v) for v in out]
    return out


def mutated_indices(originals: Sequence[torch.Tensor], after: Sequence[torch.Tensor]) -> List[int]:
    return [i for i, (a, b) in enumerate(zip(originals, after))
            if a.shape != b.shape or not torch.equal(a, b.to(a.device))]


def compare_outputs(reference: Any, got: Any, what: str) -> Check:
    """Same structure, shapes and dtypes; values within 1e-4 + 1e-3·|ref| (the file runs the
    ops the trace recorded; small differences come from eager fast paths)."""
    ref = flatten_outputs(reference)
    out = flatten_outputs(got)
    if len(ref) != len(out):
        raise ExportError(f"{what} returns {len(out)} tensors, the model {len(ref)}")
    worst = 0.0
    for (name, r), (_, g) in zip(ref, out):
        r, g = r.detach(), g.detach().to(r.device)
        if r.shape != g.shape or r.dtype != g.dtype:
            raise ExportError(f"{what}: {name} is {g.dtype}{list(g.shape)}, the model's "
                              f"{r.dtype}{list(r.shape)}")
        if r.numel() == 0:
            continue
        if not r.is_floating_point() and not r.is_complex():
            if not torch.equal(r, g):
                raise ExportError(f"{what}: {name} differs from the model's")
            continue
        diff = (r.double() - g.double()).abs()
        finite = torch.isfinite(r) & torch.isfinite(g)
        if not torch.equal(torch.isfinite(r), torch.isfinite(g)):
            raise ExportError(f"{what}: {name} has non-finite values where the model has not")
        if finite.any():
            d = diff[finite]
            allowed = 1e-4 + 1e-3 * r.double().abs()[finite]
            worst = max(worst, float(d.max()))
            if bool((d > allowed).any()):
                raise ExportError(f"{what}: {name} differs from the model's by up to "
                                  f"{float(d.max()):.3g} (the trace does not reproduce the model: "
                                  "data-dependent control flow?)")
    return Check(len(ref), worst)


def make_torchscript(module: nn.Module, inputs: Sequence[torch.Tensor], method: str,
                     verbose: bool) -> torch.jit.ScriptModule:
    with quiet_warnings(verbose):
        if method == "script":
            return torch.jit.script(module)
        # Trace with autograd on: eager fast paths that only run without grad (e.g.
        # nn.TransformerEncoderLayer's fused kernel) must not end up in the graph. Trace on
        # clones: the model may write into its inputs, and the saved inputs must stay as they were.
        with torch.enable_grad():
            return torch.jit.trace(module, clone_all(inputs), check_trace=False, strict=False)


def snapshot_state(module: nn.Module) -> Dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _unchanged(current: Any, saved: Any) -> bool:
    if not (isinstance(current, torch.Tensor) and isinstance(saved, torch.Tensor)):
        return False  # a quantized module's packed parameters: its own loader restores them
    if (current.dtype, current.shape, current.device) != (saved.dtype, saved.shape, saved.device):
        return False
    try:
        return bool(torch.equal(current, saved))
    except RuntimeError:  # a dtype torch.equal does not take
        return False


def restore_state(module: nn.Module, state: Dict[str, torch.Tensor]) -> None:
    """Puts back the values `state` saved, in place: traced/scripted modules share these
    tensors, so they are restored too. Only what changed is written: a buffer that is an
    expanded view (torch.meshgrid's grids, registered by Super_SloMo's backWarp) cannot be
    written in place at all, and load_state_dict's copy into it failed that model's AOTInductor
    package after it had compiled (2026-12-02e)."""
    current = module.state_dict()
    changed = {name: saved for name, saved in state.items() if not _unchanged(current.get(name), saved)}
    if not changed:
        return
    with torch.no_grad():
        result = module.load_state_dict(changed, strict=False)
    if result.unexpected_keys:
        raise RuntimeError(f"cannot restore the module's state: it no longer has "
                           f"{', '.join(result.unexpected_keys[:5])}")


def reference_run(module: nn.Module, inputs: Sequence[torch.Tensor], grad: bool,
                  verbose: bool) -> Tuple[Any, List[int]]:
    """The module's eval-mode outputs on clones of the inputs (detached), and the indices of
    the inputs it wrote into (the manifest's mutated inputs)."""
    module.eval()
    with quiet_warnings(verbose):
        reference, after = run_module(module, inputs, grad=grad)
    return detach_all(reference), mutated_indices(inputs, after)


def export_eval(bundle: ExportableModel, inputs: Sequence[torch.Tensor], folder: str,
                device: str, verbose: bool, check: bool = True):
    """Writes eval.pt; returns (reference output, mutated input indices, Check or None)."""
    path = os.path.join(folder, "eval.pt")
    if bundle.method == "user":
        # saved again in eval mode (a module scripted in Python is in training mode unless the
        # user called .eval()); never run: the file may be faulty on purpose
        script = bundle.prebuilt_script
        script.eval()
        torch.jit.save(script, path)
        return None, list(bundle.details.get("mutated_inputs", [])), None
    module = bundle.module
    # a trace is made with autograd on (see make_torchscript): the reference too
    reference, mutated = reference_run(module, inputs, grad=bundle.method == "trace",
                                       verbose=verbose)
    script = make_torchscript(module, inputs, bundle.method, verbose)
    torch.jit.save(script, path)
    del script
    if not check:
        return reference, mutated, None
    loaded = torch.jit.load(path, map_location=device)
    with quiet_warnings(verbose):
        got, _ = run_module(loaded, inputs, grad=False)
    return reference, mutated, compare_outputs(reference, got, "eval.pt")


def export_train(bundle: ExportableModel, inputs: Sequence[torch.Tensor], folder: str,
                 device: str, verbose: bool, check: bool = True) -> Optional[Check]:
    """Writes train.pt from the train-mode module (weights as in eval.pt: the forward passes
    made here update batch-norm statistics, which are restored afterwards)."""
    path = os.path.join(folder, "train.pt")
    if bundle.method == "user":
        script = bundle.prebuilt_script
        script.train()
        torch.jit.save(script, path)
        return None
    module = bundle.train_module or bundle.module
    if bundle.method == "script":
        # scripting compiles the code, branches and all, without running it: nothing to restore,
        # and no trace that could have frozen one path (eval.pt's check covers loading)
        module.train()
        try:
            torch.jit.save(make_torchscript(module, inputs, "script", verbose), path)
        finally:
            module.eval()
        return None
    state = snapshot_state(module)
    try:
        module.train()
        if check:
            with quiet_warnings(verbose):
                reference, _ = run_module(module, inputs, grad=True)
            reference = detach_all(reference)
            restore_state(module, state)
        script = make_torchscript(module, inputs, bundle.method, verbose)
        restore_state(module, state)
        torch.jit.save(script, path)
        del script
        if not check:
            return None
        loaded = torch.jit.load(path, map_location=device)
        with quiet_warnings(verbose):
            got, _ = run_module(loaded, inputs, grad=True)
        return compare_outputs(reference, detach_all(got), "train.pt")
    finally:
        restore_state(module, state)
        module.eval()
