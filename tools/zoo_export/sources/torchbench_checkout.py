"""A TorchBench checkout (--torchbench-dir): its models through TorchBench's own model API, and its
benchmark metadata from either layout.

Model API: `torchbenchmark.models.<name>.Model(test="eval"|"train", device=..., batch_size=...)`
(also canary_models and models/fb), `.get_module()` -> (module, example_inputs), `.batch_size`.

Metadata (batch sizes, skips, tolerances; put under suites/torchbench.yaml, which wins):
  newer checkouts  userbenchmark/dynamo/dynamobench/torchbench.yaml (upstream's yaml schema)
  older checkouts  the same folder's torchbench.py, whose module-level constants (SKIP,
                   USE_SMALL_BATCH_SIZE, REQUIRE_HIGHER_TOLERANCE, ...) are read with `ast`:
                   the file imports the dynamo runner and must never be executed here.
"""

from __future__ import annotations

import ast
import contextlib
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

import torch

from .. import process_state
from ..model_bundle import (ExportableModel, SourceUnavailable, StructuredInputs,
                            flatten_structure, spec_of_saved)
from ..suite_config import load_yaml_file

DYNAMOBENCH = os.path.join("userbenchmark", "dynamo", "dynamobench")
_PACKAGES = ("models", "canary_models", os.path.join("models", "fb"))

# old torchbench.py constant -> path in upstream's torchbench.yaml schema
CONSTANT_TO_YAML = {
    "USE_SMALL_BATCH_SIZE": ("batch_size", "training"),
    "INFERENCE_SMALL_BATCH_SIZE": ("batch_size", "inference"),
    "SKIP": ("skip", "all"),
    "SKIP_FOR_CPU": ("skip", "device", "cpu"),
    "SKIP_FOR_CUDA": ("skip", "device", "cuda"),
    "SKIP_TRAIN": ("skip", "test", "training"),
    "SKIP_DUE_TO_CONTROL_FLOW": ("skip", "control_flow"),
    "ONLY_MULTIPROCESS": ("skip", "multiprocess"),
    "ONLY_TRAINING_MODE": ("only_training",),
    "REQUIRE_HIGHER_TOLERANCE": ("tolerance", "higher"),
    "REQUIRE_EVEN_HIGHER_TOLERANCE": ("tolerance", "even_higher"),
    "REQUIRE_HIGHER_FP16_TOLERANCE": ("tolerance", "higher_fp16"),
    "REQUIRE_HIGHER_BF16_TOLERANCE": ("tolerance", "higher_bf16"),
    "REQUIRE_COSINE_TOLERACE": ("tolerance", "cosine"),  # sic, upstream's spelling
    "REQUIRE_COSINE_TOLERANCE": ("tolerance", "cosine"),
    "REQUIRE_LARGER_MULTIPLIER_FOR_SMALLER_TENSOR": ("require_larger_multiplier_for_smaller_tensor",),
    "NONDETERMINISTIC": ("non_deterministic",),
    "VERY_SLOW_BENCHMARKS": ("very_slow",),
    "SLOW_BENCHMARKS": ("slow",),
    "DONT_CHANGE_BATCH_SIZE": ("dont_change_batch_size",),
    "SKIP_ACCURACY_CHECK_MODELS": ("accuracy", "skip", "large_models"),
    "SKIP_ACCURACY_CHECK_AS_EAGER_NON_DETERMINISTIC_MODELS":
        ("accuracy", "skip", "eager_not_deterministic"),
    "MAX_BATCH_SIZE_FOR_ACCURACY_CHECK": ("accuracy", "max_batch_size"),
    "FORCE_AMP_FOR_FP16_BF16_MODELS": ("dtype", "force_amp_for_fp16_bf16_models"),
    "FORCE_FP16_FOR_BF16_MODELS": ("dtype", "force_fp16_for_bf16_models"),
    "FORCE_FP32_FOR_FP16_BF16_MODELS": ("dtype", "force_fp32_for_fp16_bf16_models"),
    "CANARY_MODELS": ("canary_models",),
    "TRT_NOT_YET_WORKING": ("trt_not_yet_working",),
}


def provides(name: str) -> bool:
    return False  # only with a checkout: see has_model


def label(name: str) -> str:
    return f"torchbench:{name}"


def default_batch_size(name: str, training: bool = False) -> Optional[int]:
    return None  # the model's own DEFAULT_{TRAIN,EVAL}_BSIZE


def unavailable_reason() -> Optional[str]:
    return None


def model_dir(checkout: str, name: str) -> Optional[str]:
    for package in _PACKAGES:
        path = os.path.join(checkout, "torchbenchmark", package, name)
        if os.path.isfile(os.path.join(path, "__init__.py")):
            return path
    return None


def has_model(checkout: str, name: str) -> bool:
    return model_dir(checkout, name) is not None


def is_canary(checkout: str, name: str) -> bool:
    """A model of torchbenchmark/canary_models: upstream runs those only when its yaml's
    canary_models names them."""
    folder = model_dir(checkout, name)
    return folder is not None and os.path.basename(os.path.dirname(folder)) == "canary_models"


# --- metadata ---------------------------------------------------------------------------------

class _NotLiteral(Exception):
    pass


def _evaluate(node: ast.AST, env: Dict[str, Any]) -> Any:
    """Literal containers of constants, references to earlier constants, `*NAME` spreads,
    set()/dict()/list() calls and `|`/`+` of them; anything else is not metadata."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        items: List[Any] = []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                items.extend(_evaluate(elt.value, env))
            else:
                items.append(_evaluate(elt, env))
        return items  # sets become lists: yaml has no sets, and order helps people reading
    if isinstance(node, ast.Dict):
        table: Dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                table.update(_evaluate(value, env))
            else:
                table[_evaluate(key, env)] = _evaluate(value, env)
        return table
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise _NotLiteral(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id in ("set", "frozenset", "list", "tuple") and len(node.args) <= 1:
            return list(_evaluate(node.args[0], env)) if node.args else []
        if node.func.id == "dict" and len(node.args) <= 1:
            return dict(_evaluate(node.args[0], env)) if node.args else {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.Add)):
        left, right = _evaluate(node.left, env), _evaluate(node.right, env)
        if isinstance(left, dict):
            return {**left, **right}
        return list(left) + [x for x in right if x not in left]
    raise _NotLiteral(type(node).__name__)


def parse_constants(source: str) -> Dict[str, Any]:
    """Module-level UPPER_CASE constants of an old dynamobench torchbench.py, without running it."""
    env: Dict[str, Any] = {}
    for stmt in ast.parse(source).body:
        try:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if stmt.value is None:
                    continue
                names = [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
                if names:
                    value = _evaluate(stmt.value, env)
                    for n in names:
                        env[n] = value
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                if name in env and isinstance(stmt.op, (ast.BitOr, ast.Add)):
                    env[name] = _evaluate(
                        ast.BinOp(left=ast.Name(name, ast.Load()), op=stmt.op, right=stmt.value),
                        env)
            elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                  and isinstance(stmt.value.func, ast.Attribute)
                  and isinstance(stmt.value.func.value, ast.Name)
                  and stmt.value.func.value.id in env):
                name, method = stmt.value.func.value.id, stmt.value.func.attr
                args = [_evaluate(a, env) for a in stmt.value.args]
                target = env[name]
                if method == "update" and isinstance(target, dict):
                    for a in args:
                        target.update(a)
                elif method == "update":
                    for a in args:
                        target.extend(x for x in a if x not in target)
                elif method == "add" and len(args) == 1 and args[0] not in target:
                    target.append(args[0])
        except (_NotLiteral, TypeError, ValueError, KeyError):
            continue
    return env


def constants_to_yaml_schema(constants: Dict[str, Any]) -> Dict[str, Any]:
    tree: Dict[str, Any] = {}
    for constant, path in CONSTANT_TO_YAML.items():
        if constant not in constants:
            continue
        node = tree
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = constants[constant]
    return tree


def read_metadata(checkout: str) -> Tuple[Dict[str, Any], str]:
    """(metadata in torchbench.yaml's schema, which layout it came from)."""
    yaml_path = os.path.join(checkout, DYNAMOBENCH, "torchbench.yaml")
    py_path = os.path.join(checkout, DYNAMOBENCH, "torchbench.py")
    if os.path.isfile(yaml_path):
        return load_yaml_file(yaml_path), "torchbench.yaml"
    if os.path.isfile(py_path):
        with open(py_path, encoding="utf-8") as f:
            return constants_to_yaml_schema(parse_constants(f.read())), "torchbench.py constants"
    return {}, "none"


# --- models -----------------------------------------------------------------------------------

@contextlib.contextmanager
def _inside_checkout(checkout: str):
    """TorchBench models read data relative to the checkout and import `torchbenchmark` from it
    (upstream's setup_torchbench_cwd). A `torchbenchmark` imported from another checkout is
    dropped first."""
    checkout = os.path.abspath(checkout)
    loaded = sys.modules.get("torchbenchmark")
    loaded_from = getattr(loaded, "__file__", None) or ""
    if loaded is not None and not os.path.abspath(loaded_from).startswith(checkout + os.sep):
        for key in [k for k in sys.modules if k == "torchbenchmark" or
                    k.startswith("torchbenchmark.")]:
            del sys.modules[key]
    old_cwd = os.getcwd()
    old_dont_write_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # the checkout may be read-only (shared/): no __pycache__
    sys.path.insert(0, checkout)
    os.chdir(checkout)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.dont_write_bytecode = old_dont_write_bytecode
        try:
            sys.path.remove(checkout)
        except ValueError:
            pass


def _import_model_module(name: str):
    import importlib

    candidates = [f"torchbenchmark.{p.replace(os.sep, '.')}.{name}" for p in _PACKAGES]
    for candidate in candidates:
        try:
            return importlib.import_module(candidate)
        except ModuleNotFoundError as e:
            if e.name != candidate and not candidate.startswith(f"{e.name}."):
                raise
    raise SourceUnavailable(f"could not import any of {candidates}")


def scope():
    """The exporter holds this around everything it does with a checkout model (build, trace,
    runs): the model's code may use the shims, and may change process state, at any of them."""
    return process_state.checkout_scope()


def _construct(benchmark_cls, test: str, ctx):
    kwargs = dict(test=test, device=ctx.device, batch_size=ctx.batch_size)
    try:
        return benchmark_cls(extra_args=[], **kwargs)
    except TypeError as e:
        if "extra_args" not in str(e):
            raise
        return benchmark_cls(**kwargs)


def build(name: str, ctx) -> ExportableModel:
    """Builds through TorchBench's model API. Whatever the checkout changes process-wide is put
    back when this returns (process_state), also for a caller that rebuilds the model from its
    manifest's `rebuild` record without the exporter around it."""
    checkout = ctx.torchbench_dir
    if not checkout:
        raise SourceUnavailable(f"{name} needs a TorchBench checkout: pass --torchbench-dir DIR")
    if not has_model(checkout, name):
        raise SourceUnavailable(f"{checkout} has no torchbenchmark/models/{name}")
    test = "train" if ctx.training else "eval"
    with process_state.checkout_scope() as shims, _inside_checkout(checkout):
        module = _import_model_module(name)
        benchmark_cls = getattr(module, "Model", None)
        if benchmark_cls is None:
            raise SourceUnavailable(f"torchbenchmark model {name} has no class Model")
        benchmark = _construct(benchmark_cls, test, ctx)
        model, example_inputs = benchmark.get_module()
    # TorchBench's contract: DEEPCOPY = False means the model must never be deep-copied
    # (upstream found models whose deepcopy recurses forever); the manifest carries it on
    deepcopy = bool(getattr(benchmark, "DEEPCOPY", True))
    batch_size = getattr(benchmark, "batch_size", None) or ctx.batch_size or 0

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    flat, rebuild = flatten_structure(example_inputs)
    if isinstance(example_inputs, dict):
        names = list(example_inputs.keys())
        module_to_export = StructuredInputs(model, rebuild, call_with_kwargs=True)
    elif (isinstance(example_inputs, (list, tuple)) and
          all(isinstance(t, torch.Tensor) for t in example_inputs)):
        names = [f"input_{i}" for i in range(len(flat))]
        module_to_export = model
    else:
        names = [f"input_{i}" for i in range(len(flat))]
        module_to_export = StructuredInputs(model, rebuild)
    if len(names) != len(flat):
        names = [f"input_{i}" for i in range(len(flat))]
    specs = [spec_of_saved(n, t.detach().cpu()) for n, t in zip(names, flat)]
    return ExportableModel(
        module=module_to_export, inputs=tuple(t.detach().cpu() for t in flat),
        input_specs=specs, source=label(name), batch_size=int(batch_size), deepcopy=deepcopy,
        details=_details(checkout, name, test, shims))


def _details(checkout: str, name: str, test: str, shims: List[str]) -> Dict[str, Any]:
    details: Dict[str, Any] = {"checkout": os.path.abspath(checkout), "test": test}
    if os.path.basename(os.path.dirname(model_dir(checkout, name) or "")) == "canary_models":
        details["canary"] = True  # exported by --only or the yaml's canary_models
    if shims:
        details["shims"] = shims  # stand-ins for what this torch lacks (process_state)
    return details
