"""The zoo model as a Python module again, proven to be the model zoobench's eager reference runs.

The exporter records in the manifest how it built the model (`rebuild`: the source module, the
name that source knows the model by, the build context and the seed). The same source builds it
again here, eval.pt's weights are loaded into it by name (so the weights are the exported ones
whatever a library's initialisation does), and its outputs on the zoo's own inputs are compared
with eval.pt's: bitwise on the CPU, PyTorch's `same` rule on CUDA. A module that differs is
refused with the reason; it never reaches a compiler.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import torch


class RebuildError(Exception):
    """The model cannot be rebuilt, or the rebuilt module is not the exported model. The
    message says which, and what to do."""


@dataclass
class RebuiltModel:
    module: torch.nn.Module          # eval.pt's module (the wrapper the exporter traced)
    train_module: torch.nn.Module    # train.pt's (the same object unless the source has its own)
    manifest: Dict[str, Any]
    folder: str
    keep_dropout: bool = False
    script: Any = None               # eval.pt, loaded by load_exported_weights

    def artifact_path(self, role: str) -> Optional[str]:
        entry = self.manifest.get("artifacts", {}).get(role)
        return os.path.join(self.folder, entry["path"]) if entry else None

    def verified_bytes(self, entry: Dict[str, Any], default_path: str) -> io.BytesIO:
        """An artifact's bytes (a manifest entry with path and sha256), read once and checked
        against its sha256: torch loads these bytes, never the path again, so a file replaced
        after the check (a re-export during the run) is not loaded under this model's name."""
        path = os.path.join(self.folder, entry.get("path", default_path))
        with open(path, "rb") as f:
            data = f.read()
        actual = hashlib.sha256(data).hexdigest()
        if actual != str(entry.get("sha256", "")).lower():
            raise RebuildError(f"{path} has sha256 {actual[:12]}..., the manifest says "
                               f"{str(entry.get('sha256', ''))[:12]}...: the file changed after "
                               f"export; not loading it. Re-export the model")
        return io.BytesIO(data)


def read_manifest(path: str) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def rebuild(manifest_path: str, device: str, weights: str = "eval.pt") -> RebuiltModel:
    """Builds the module from the manifest's `rebuild` record on `device`: with eval.pt's weights
    (weights "eval.pt"), or with the weights the record's seed gives (weights "recipe": the eager
    reference is then this module itself, and every preparation of this process gets a copy of
    one build, so that eager, float64 and compiled share its weights). Raises RebuildError when
    there is no record or the source cannot build it here."""
    if weights == "recipe":
        return _copy_of_recipe_build(manifest_path, device)
    model = _build_from_recipe(manifest_path, device)
    load_exported_weights(model, device)
    return model


# One build per (manifest, device) in this process, for weights "recipe": the preparations of a
# model's run (float64, eager twice, compiled) each take a copy, as upstream's harness deep-copies
# the one model it built.
_RECIPE_BUILDS: Dict[Tuple[str, str], RebuiltModel] = {}


def _build_key(manifest_path: str, device: str) -> Tuple[str, str]:
    # A model's process runs on one device: its type names it ("cuda" and "cuda:0" alike).
    return os.path.abspath(manifest_path), torch.device(device).type


def remember_recipe_build(manifest_path: str, device: str, module: torch.nn.Module,
                          train_module: Optional[torch.nn.Module], keep_dropout: bool) -> None:
    """The build this process made while exporting the model's recipe (zoo_export.in_process),
    on `device`: the preparations that follow copy it instead of building the model again."""
    _RECIPE_BUILDS.clear()
    _RECIPE_BUILDS[_build_key(manifest_path, device)] = RebuiltModel(
        module=module, train_module=train_module or module, manifest=read_manifest(manifest_path),
        folder=os.path.dirname(os.path.abspath(manifest_path)), keep_dropout=keep_dropout)


def _copy_of_recipe_build(manifest_path: str, device: str) -> RebuiltModel:
    key = _build_key(manifest_path, device)
    if key not in _RECIPE_BUILDS:
        _RECIPE_BUILDS.clear()  # another model's build is not needed again
        _RECIPE_BUILDS[key] = _build_from_recipe(manifest_path, device)
    built = _RECIPE_BUILDS[key]
    if not built.manifest.get("deepcopy", True):
        # A model that cannot be copied is built again, from the same seed.
        return _build_from_recipe(manifest_path, device)
    try:
        module, train_module = copy.deepcopy((built.module, built.train_module))
    except Exception as e:  # noqa: BLE001 - a module holding something that does not copy
        print(f"zoobench: {built.manifest.get('name')} cannot be copied ({type(e).__name__}: "
              f"{str(e)[:120]}); built again from its recipe's seed instead", file=sys.stderr)
        return _build_from_recipe(manifest_path, device)
    return RebuiltModel(module=module, train_module=train_module, manifest=built.manifest,
                        folder=built.folder, keep_dropout=built.keep_dropout)


def _build_from_recipe(manifest_path: str, device: str) -> RebuiltModel:
    manifest = read_manifest(manifest_path)
    folder = os.path.dirname(os.path.abspath(manifest_path))
    record = manifest.get("rebuild")
    name = manifest.get("name", "?")
    if not record:
        if str(manifest.get("source", "")).startswith("torchscript:"):
            raise RebuildError(f"{name} was added from a TorchScript file (--from-torchscript): "
                               "it has no Python source for torch.compile to compile")
        raise RebuildError(f"{name}'s manifest has no `rebuild` record (exported before the "
                           "torch.compile backends existed): re-export it with tools/export_zoo.py")

    from zoo_export import sources
    from zoo_export.model_bundle import SourceUnavailable, seed_everything

    source = find_source(record, name)
    context = sources.BuildContext(**record.get("context", {}))
    # The checkout's own models build on the device they will run on; the others build on the
    # CPU and move (the exporter does the same).
    context.device = torch.device(device).type
    seed_everything(record.get("seed", 1337))
    try:
        bundle = source.build(record["name"], context)
    except SourceUnavailable as e:
        raise RebuildError(f"{name}: {e}") from None
    # Dropout stays as built (ModelSession sets it to 0 where the module trains).
    keep_dropout = bool(record.get("keep_dropout", False))
    modules = {id(m): m for m in (bundle.module, bundle.train_module) if m is not None}
    for m in modules.values():
        m.to(device)
    return RebuiltModel(module=bundle.module, train_module=bundle.train_module or bundle.module,
                        manifest=manifest, folder=folder, keep_dropout=keep_dropout)


def find_source(record: Dict[str, Any], name: str):
    """The module whose build(name, context) made the model: one of the exporter's sources
    (zoo_export.sources.<source>), or any importable module, found in the record's
    `python_path` folder when it has one (a user's or a test's own model code)."""
    import importlib
    import sys

    from zoo_export import sources

    source = getattr(sources, record["source"], None)
    if source is None:
        if record.get("python_path") and record["python_path"] not in sys.path:
            sys.path.insert(0, record["python_path"])
        try:
            source = importlib.import_module(record["source"])
        except ImportError as e:
            raise RebuildError(f"{name}: its source {record['source']!r} is neither one of the exporter's "
                               f"sources nor importable here ({e})") from None
    if not hasattr(source, "build"):
        raise RebuildError(f"{name}: its source {record['source']!r} has no build(name, context)")
    return source


def load_exported_weights(model: RebuiltModel, device: str) -> torch.jit.ScriptModule:
    """Copies eval.pt's parameters and buffers into the module by name; every name and shape
    must match. TorchScript keeps every buffer (also those a module registers as not
    persistent, such as timm's relative position indices), so the module's side counts them too."""
    entry = model.manifest.get("artifacts", {}).get("eval")
    if entry is None:
        raise RebuildError(f"{model.manifest.get('name')} has no eval.pt to take weights from")
    script = torch.jit.load(model.verified_bytes(entry, "eval.pt"), map_location=device)
    exported = script.state_dict()
    own = dict(named_tensors(model.module, "_parameters") + named_tensors(model.module, "_buffers"))
    missing = sorted(set(own) - set(exported))
    unexpected = sorted(set(exported) - set(own))
    if missing or unexpected:
        raise RebuildError(
            f"the rebuilt module's weights do not match eval.pt's: missing in eval.pt "
            f"{missing[:3]}{'...' if len(missing) > 3 else ''}, only in eval.pt "
            f"{unexpected[:3]}{'...' if len(unexpected) > 3 else ''} (the source builds another "
            "architecture than the one exported: re-export the model)")
    for key, value in exported.items():
        if own[key].shape != value.shape:
            raise RebuildError(f"the rebuilt module's {key} is {list(own[key].shape)}, eval.pt's "
                               f"{list(value.shape)}: re-export the model")
    with torch.no_grad():
        for key, value in exported.items():
            copy_weight(key, own[key], value)
    follow_run_convolution_settings(script)
    model.script = script
    return script


def copy_weight(key: str, own: torch.Tensor, exported: torch.Tensor) -> None:
    """eval.pt's value into the rebuilt module's tensor. A buffer whose elements share memory
    (an expanded grid, as Super_SloMo's backwarp has) cannot be written into; it is the
    module's own constant, so it must already hold eval.pt's values."""
    try:
        own.copy_(exported)
    except RuntimeError:
        if own.shape == exported.shape and torch.equal(own, exported.to(own.device, own.dtype)):
            return
        raise RebuildError(f"the rebuilt module's {key} cannot be written (its elements share "
                           "memory) and differs from eval.pt's: re-export the model") from None


def named_tensors(module: torch.nn.Module, kind: str, prefix: str = "") -> List[Tuple[str, torch.Tensor]]:
    """Parameters or buffers (kind "_parameters" / "_buffers") by qualified name, in
    registration order, without removing tensors shared under several names (as TorchScript
    lists them)."""
    out = []
    for name, tensor in getattr(module, kind).items():
        if tensor is not None:
            out.append((prefix + name, tensor))
    for name, child in module._modules.items():
        if child is not None:
            out += named_tensors(child, kind, prefix + name + ".")
    return out


def follow_run_convolution_settings(script: torch.jit.ScriptModule) -> int:
    """What zoobench's C++ loader does to every TorchScript file (zoo/model_files.h): traced
    convolutions (aten::_convolution, with the cuDNN switches of the moment of tracing, TF32 on
    by default, as constants) become aten::convolution, which reads the switches when it runs.
    Then eval.pt computes here what zoobench's eager reference computes."""
    rewritten = 0
    for module in script.modules():
        try:
            graph = module.graph
        except (AttributeError, RuntimeError):
            continue  # no forward
        for node in graph.findAllNodes("aten::_convolution"):
            inputs = list(node.inputs())
            replacement = graph.create("aten::convolution", inputs[:9], 1)
            replacement.insertBefore(node)
            replacement.output().setType(node.output().type())
            node.output().replaceAllUsesWith(replacement.output())
            node.destroy()
            rewritten += 1
    return rewritten


def _leaves(value: Any, path: str = "output") -> List[Tuple[str, Any]]:
    if isinstance(value, torch.Tensor):
        return [(path, value)]
    if isinstance(value, dict):
        out = []
        for key in value:
            out += _leaves(value[key], f"{path}[{key!r}]")
        return out
    if isinstance(value, (list, tuple)):
        out = []
        for i, item in enumerate(value):
            out += _leaves(item, f"{path}[{i}]")
        return out
    return [(path, value)]


def first_difference(expected: Any, got: Any, bitwise: bool) -> Optional[str]:
    """None when `got` is `expected` (bitwise, or within PyTorch's own `same` rule), else where
    and by how much it differs."""
    ref, res = _leaves(expected), _leaves(got)
    if len(ref) != len(res):
        return f"the module returns {len(res)} values, eval.pt {len(ref)}"
    for (name, r), (_, g) in zip(ref, res):
        if not isinstance(r, torch.Tensor) or not isinstance(g, torch.Tensor):
            if r != g:
                return f"{name}: {g!r} where eval.pt gives {r!r}"
            continue
        g = g.to(r.device)
        if r.shape != g.shape or r.dtype != g.dtype:
            return f"{name} is {g.dtype}{list(g.shape)}, eval.pt's {r.dtype}{list(r.shape)}"
        if bitwise:
            if not torch.equal(r, g) and not (r.is_floating_point() and
                                              torch.equal(r.isnan(), g.isnan()) and
                                              torch.equal(r.nan_to_num(), g.nan_to_num())):
                diff = (r.double() - g.double()).abs().max().item() if r.is_floating_point() else "-"
                return f"{name} differs from eval.pt's (max abs {diff}; bitwise equality expected on the CPU)"
            continue
        if not _same(r, g):
            diff = (r.double() - g.double()).abs().max().item() if r.is_floating_point() else "-"
            return f"{name} differs from eval.pt's (max abs {diff}) beyond PyTorch's `same` rule"
    return None


# Off the CPU the two sides may take different kernels even with deterministic cuDNN and no
# TF32 (the module runs with autograd on where it was traced so): Super_SloMo's output differed
# by 1.5e-4 on an H200. Another model (other weights, another seed) differs by O(1), far beyond.
IDENTITY_TOLERANCE = 1e-3


def _same(ref: torch.Tensor, res: torch.Tensor) -> bool:
    try:
        from torch._dynamo.utils import same
    except ImportError:  # torch < 2.0
        if ref.is_floating_point():
            return torch.allclose(ref, res, rtol=IDENTITY_TOLERANCE, atol=IDENTITY_TOLERANCE,
                                  equal_nan=True)
        return torch.equal(ref, res)
    return bool(same(ref, res, tol=IDENTITY_TOLERANCE, equal_nan=True))


def check_identity(model: RebuiltModel, device: str) -> None:
    """Runs the module and eval.pt (the TorchScript interpreter with optimizations off, as
    zoobench's eager reference) on the zoo's inputs; raises RebuildError if they differ."""
    from zoo_export.model_bundle import seed_everything
    from zoo_export.torchscript_export import clone_all, detach_all

    inputs_entry = model.manifest.get("inputs", {})
    inputs = torch.load(model.verified_bytes(inputs_entry, "inputs.pt"))
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = tuple(t.to(device) if isinstance(t, torch.Tensor) else t for t in inputs)
    method = model.manifest.get("artifacts", {}).get("eval", {}).get("method", "trace")
    training = model.module.training
    model.module.eval()
    restore = _exact_numerics()
    try:
        seed_everything()
        with torch.no_grad(), torch.jit.optimized_execution(False):
            expected = model.script(*clone_all(inputs))
        seed_everything()
        # A trace is made with autograd on (eager fast paths that only run without it must not
        # be taken): run the module the way it was traced.
        with torch.set_grad_enabled(method == "trace"):
            got = model.module(*clone_all(inputs))
    finally:
        model.module.train(training)
        restore()
    where = first_difference(detach_all(expected), detach_all(got), bitwise=torch.device(device).type == "cpu")
    if where:
        raise RebuildError(f"the rebuilt Python module is not the exported model: {where}")


def _exact_numerics():
    """Deterministic kernels and no TF32 while the two sides are compared (a performance run
    allows both, and two cuDNN algorithms chosen by benchmark mode differ by more than `same`
    allows); returns what puts the caller's settings back."""
    saved = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
             torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False

    def restore():
        (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
         torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32) = saved

    return restore

