"""One zoo model prepared for one Python backend: rebuilt and proven (rebuild.py), cast, put in
training or eval mode, compiled with torch.compile (or not: python_eager), warmed up, then run
by zoobench, which times the calls and judges the results.

Training is upstream's step (benchmarks/dynamo's forward_and_backward_pass), compiled whole as
upstream compiles it: gradients cleared to None (outside dynamo, as upstream's
optimizer_zero_grad), forward and loss, backward, the optimizer's step (SGD's outside dynamo, as
upstream wraps it; Adam's compiled). Dynamo breaks the graph where upstream's does, so its
counts (graph_breaks, unique_graphs, calls_captured) are upstream's. zoobench's TorchScript
backends zero the gradients in place, which gives the same numbers.

zoobench calls, with tensors shared (never copied): run(inputs), run_uncompiled(inputs),
step(inputs) -> (loss, outputs), step_uncompiled(inputs), training_state() -> (gradients,
parameters, buffers) as (name, tensor) lists, facts() -> JSON, close().
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from typing import Any, Dict, List, Optional, Sequence

import torch

from . import compiler_bisect, device_gate, frame_watch
from . import rebuild as rebuild_module
from .rebuild import named_tensors
from .environment import torch_compile_missing
from zoo_export.model_bundle import disable_dropout
from zoo_export.sources.torchbench_transformers import LOGITS_LOSS_OUTPUTS

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float64": torch.float64}


class UnsupportedHere(Exception):
    """The backend cannot run with this Python (e.g. torch.compile on torch 1.13)."""


def open_session(config: Dict[str, Any]) -> "ModelSession":
    return ModelSession(config)


def set_mode(module: torch.nn.Module, trains: bool, keep_dropout: bool) -> None:
    """Train or eval mode. A module that trains has its dropout set to 0 unless the model keeps
    it, so that eager and compiled steps are deterministic. In eval mode the model keeps its
    dropout as built, as upstream's torchbench models do: dropout does nothing there, and a
    model that calls it only when its probability is above 0 (nvidia_deeprecommender)
    captures the same calls as upstream's."""
    module.train(trains)
    if trains and not keep_dropout:
        disable_dropout(module)


class ModelSession:
    def __init__(self, config: Dict[str, Any]):
        self.device = config["device"]
        self.training = config["mode"] == "training"
        self.dtype = DTYPES[config.get("dtype", "float32")]
        self.amp = bool(config.get("amp", False))
        self.loss_scale = float(config.get("loss_scale", 1.0))
        self.compile_settings: Optional[Dict[str, Any]] = config.get("compile")
        if self.compile_settings:
            missing = torch_compile_missing(torch)
            if missing:
                raise UnsupportedHere(missing)
        self._cache = None
        self._compiled = None
        self._phases_before: Dict[str, float] = {}
        self._frames_watched = False
        weights = config.get("weights", "eval.pt")
        self.model = rebuild_module.rebuild(config["manifest"], self.device, weights)
        # With eval.pt's weights the module must be the model eval.pt is (zoobench's eager
        # reference); a module built from its recipe is the reference itself.
        if weights == "eval.pt" and config.get("identity_check", True):
            rebuild_module.check_identity(self.model, self.device)
        manifest = self.model.manifest
        training_entry = manifest.get("training", {})
        self.loss_rule = training_entry.get("loss", "mean_of_floating_outputs")
        self.loss_scale *= float(training_entry.get("loss_scale", 1.0))
        self.module = self.model.train_module if self.training else self.model.module
        # A model the exporter wrapped for TorchScript (a transformers model: keyword inputs in,
        # a ModelOutput out, flattened by the wrapper): its training step calls the model itself
        # with keyword inputs and takes the loss of its own output, as upstream's step does
        # (mod(**cloned_inputs)); the outputs zoobench compares are flattened after the step.
        self._keyword_model, self._input_names = _keyword_call_of(self.module, self.loss_rule)
        self._upstream_loss = self._upstream_loss_of_rule()
        # Upstream checks torchbench models' training accuracy in eval mode (use_eval_mode: no
        # dropout, batch-norm's running statistics); zoobench asks for it then (eval_mode).
        set_mode(self.module, self.training and not config.get("eval_mode", False),
                 self.model.keep_dropout)
        if self.dtype != torch.float32:
            self.module.to(self.dtype)  # floating parameters and buffers only, as zoobench's cast
        if config.get("channels_last", False):
            self.module.to(memory_format=torch.channels_last)  # upstream's --channels-last
        self._optimizer_settings = config.get("optimizer", {})
        self.optimizer = self._make_optimizer(self._optimizer_settings) if self.training else None
        if self.compile_settings:
            self._compile(self.compile_settings)

    # --- what zoobench calls ------------------------------------------------------------------

    def run(self, inputs: Sequence[torch.Tensor]):
        self._mark_step()
        with torch.no_grad(), self._autocast():
            return self._forward_callable()(*inputs)

    def run_uncompiled(self, inputs: Sequence[torch.Tensor]):
        with torch.no_grad(), self._autocast():
            return self.module(*inputs)

    def step(self, inputs: Sequence[torch.Tensor]):
        self._mark_step()
        return self._flat_results(self._forward_callable()(self._as_called(inputs), True))

    def step_uncompiled(self, inputs: Sequence[torch.Tensor]):
        return self._flat_results(self._train_step(self._as_called(inputs), True))

    def warm_up(self, inputs: Sequence[torch.Tensor], calls: int, gate=None) -> None:
        """Calls until compiled (and, for CUDA-graph modes, recorded): compile time belongs to
        preparation. `gate`: the descriptors of zoobench's shared hold of the device, let go
        while dynamo and Inductor compile (device_gate.py). Training calls are whole steps,
        after which the parameters, buffers (batch-norm statistics) and the optimizer's state
        are put back in place, so the model stays as loaded."""
        before = device_gate.released_seconds
        with device_gate.released_while_compiling(gate, self._compiles_off_device()):
            self._warm_up(inputs, calls)
        if device_gate.released_seconds > before:
            print(f"zoobench: compiled for {device_gate.released_seconds - before:.1f} s with the "
                  "device left to the other model pipelines", file=sys.stderr, flush=True)

    def _compiles_off_device(self) -> bool:
        """Whether compiling leaves the device alone: max-autotune times candidate kernels on
        it while it compiles."""
        settings = self.compile_settings or {}
        options = settings.get("options") or {}
        return not ("max-autotune" in str(settings.get("mode") or "") or
                    options.get("max_autotune") or options.get("max_autotune_gemm"))

    def _warm_up(self, inputs: Sequence[torch.Tensor], calls: int) -> None:
        if not self.training:
            for _ in range(calls):
                self.run(inputs)
            compiler_bisect.record_counters()
            return
        saved = [(t, t.detach().clone()) for t in self._model_state()]
        if self._compiled is not None:
            self._eager_step_first(inputs)
        for call in range(calls):
            self._mark_step()
            # As upstream's run_n_iterations: the last call collects the results (dynamo
            # compiles that variant of the step's tail too, and counts it).
            self._forward_callable()(self._as_called(inputs), call == calls - 1)
        _clear_gradients(self.optimizer, self.module)
        with torch.no_grad():
            for tensor, copy in saved:
                tensor.copy_(copy)
            # The optimizer's state began empty; in place, zeros are that state (Adam's step
            # count and moments), and the compiled step keeps the tensors it was traced with.
            states = self.optimizer.state.values() if self.optimizer is not None else []
            for state in states:
                for value in state.values():
                    if isinstance(value, torch.Tensor):
                        value.zero_()
        compiler_bisect.record_counters()

    def _eager_step_first(self, inputs: Sequence[torch.Tensor]) -> None:
        """One uncompiled step before the first compiled one, as upstream's accuracy check runs
        its eager steps before it compiles, in the same process: torch's Python code that fills
        a cache on its first call (typing's Union[...] in autograd.backward) then runs outside
        dynamo, not under it, where each such frame is a fallbacks_to_eager that upstream's
        counts lack. On an optimizer of its own (upstream's eager runs have theirs: the compiled
        step's starts empty), with the random generators' state put back; the caller puts the
        parameters and buffers back."""
        optimizer = self.optimizer
        cuda = torch.device(self.device).type == "cuda"
        devices = [torch.device(self.device).index or 0] if cuda else []
        try:
            self.optimizer = self._make_optimizer(self._optimizer_settings)
            with torch.random.fork_rng(devices=devices):
                self._train_step(self._as_called(inputs), False)
            _clear_gradients(self.optimizer, self.module)
        finally:
            self.optimizer = optimizer

    def _model_state(self) -> List[torch.Tensor]:
        return [t for _, t in named_tensors(self.module, "_parameters")] + \
            [t for _, t in named_tensors(self.module, "_buffers")]

    def training_state(self):
        """(gradients, parameters, buffers) by TorchScript's names (no deduplication: a tied
        weight appears under each of its names, as TorchScript lists it)."""
        gradients, parameters, buffers = [], [], []
        for name, p in named_tensors(self.module, "_parameters"):
            gradients.append((name + ".grad", p.grad if p.grad is not None else torch.zeros_like(p)))
            parameters.append((name, p.detach()))
        for name, b in named_tensors(self.module, "_buffers"):
            buffers.append((name, b.detach()))
        return gradients, parameters, buffers

    def facts(self, _argument: Any = None) -> Dict[str, Any]:
        """What ran: whether CUDA graphs hold the compiled code, and dynamo's counts."""
        out: Dict[str, Any] = {"cudagraphs": self._uses_cudagraphs()}
        if self.compile_settings:
            from torch._dynamo.utils import counters

            out["graphs"] = int(counters["stats"]["unique_graphs"])
            out["graph_breaks"] = int(sum(counters["graph_break"].values()))
            out["recompiles"] = int(sum(counters["recompiles"].values()))
            out["dynamo_stats"] = dynamo_stats(counters)
            breaks = graph_break_reasons(counters)
            if breaks:
                out["graph_break_reasons"] = breaks
            failed = frame_watch.frames_given_up(self._frames_watched, _compilation_metrics())
            if failed:
                out["frames_not_converted"] = failed
            phases = phase_seconds_since(self._phases_before, _time_spent())
            if phases:
                out["compile_phases_s"] = phases
        return out

    def close(self, _argument: Any = None) -> None:
        self._compiled = None
        if self.compile_settings:
            compiler_bisect.record_counters()  # again: a recompilation during the checks counts
            import torch._dynamo

            torch._dynamo.reset()
        if self._cache is not None:
            self._cache.__exit__(None, None, None)
            self._cache = None

    # --- pieces -------------------------------------------------------------------------------

    def _compile(self, settings: Dict[str, Any]) -> None:
        import torch._dynamo
        from torch._dynamo.utils import counters

        # Counts and caches start afresh for each preparation: graph counts are this model's,
        # and the compile time is a cold compile unless the user keeps the caches.
        torch._dynamo.reset()
        counters.clear()
        _clear_compilation_metrics()
        self._phases_before = _time_spent()
        # Which frames fallbacks_to_eager counts, the skipped ones included (frame_watch.py).
        self._frames_watched = frame_watch.start()
        frame_watch.clear()
        if not settings.get("keep_cache", False):
            self._cache = fresh_compile_cache()
            self._cache.__enter__()
        # Under `zoobench bisect`'s compiler bisector (compiler_bisect.py): its state, before
        # torch.compile, which then takes the bisector's backend.
        compiler_bisect.join_from_environment()
        # Upstream's --dynamic-shapes: every size may be dynamic from the first compile.
        torch._dynamo.config.assume_static_by_default = not settings.get("dynamic_shapes", False)
        kwargs = compile_arguments(settings)
        target = self._train_step if self.training else self.module
        self._compiled = torch.compile(target, **kwargs)

    def _forward_callable(self):
        """The compiled function, or what it compiles (an nn.Module may be falsy: no `or`)."""
        if self._compiled is not None:
            return self._compiled
        return self._train_step if self.training else self.module

    def _train_step(self, inputs: Sequence[torch.Tensor], collect_outputs: bool):
        """Upstream's forward_and_backward_pass call for call, each call at upstream's depth
        (dynamo counts a graph break in the frame it happens in, and a break inside a called
        function of ours costs frames upstream's step does not make): torch's clone_inputs and
        collect_results called from this frame, the gradients' clearing outside dynamo, the
        loss in a function of its own that calls torch's reduce_to_scalar_loss (upstream's
        compute_loss), the optimizer's step in a method (upstream's optimizer_step). Dynamo
        does not trace torch's own files, so each of torch's helpers is a graph break, here as
        in upstream's harness. `inputs`: a dict for a model called with keyword inputs (as
        upstream's, _as_called), else a sequence. (loss, outputs) when collecting, else None."""
        cloned_inputs = clone_inputs(inputs)
        _clear_gradients(self.optimizer, self.module)
        with self._autocast():
            if isinstance(cloned_inputs, dict):
                outputs = self._keyword_model(**cloned_inputs)
            else:
                outputs = self.module(*cloned_inputs)
            if self._upstream_loss is not None and _all_floating(outputs):
                loss = self._upstream_loss(outputs)
            else:
                loss = training_loss(outputs, self.loss_rule, self.loss_scale)
        loss.backward()
        self._optimizer_step()
        if collect_outputs:
            called = self.module if self._keyword_model is None else self._keyword_model
            collect_results(called, None, loss, cloned_inputs)
            return loss.detach(), outputs
        return None

    # Upstream's compute_loss and scaled_compute_loss, each a function of its own whose body is
    # the call of reduce_to_scalar_loss, which dynamo does not trace: there dynamo counts that
    # graph break once, as in upstream's step. In a function with code before the call
    # (training_loss) it counted it twice (hf_Bert: 7 breaks against upstream's 6).
    def _upstream_compute_loss(self, pred):
        return _UPSTREAM_REDUCE_TO_SCALAR_LOSS(pred)

    def _upstream_scaled_compute_loss(self, pred):
        return _UPSTREAM_REDUCE_TO_SCALAR_LOSS(pred) / (1.0 / self.loss_scale)

    def _upstream_loss_of_rule(self):
        """The step's loss as upstream's harness computes it, for a model whose outputs are all
        floating (the step checks), where the loss rule is upstream's reduction; else None."""
        if _UPSTREAM_REDUCE_TO_SCALAR_LOSS is None or self.loss_rule == "first_output":
            return None
        if self.loss_scale == 1.0:
            return self._upstream_compute_loss
        return self._upstream_scaled_compute_loss

    def _as_called(self, inputs: Sequence[torch.Tensor]):
        """The step's inputs as its model takes them: by name for a keyword-input model."""
        if self._input_names is None:
            return inputs
        return dict(zip(self._input_names, inputs))

    def _flat_results(self, results):
        """(loss, outputs) with a keyword-input model's output flattened as its exporter wrapper
        flattens it (the tensors zoobench compares, in TorchScript's order)."""
        if results is None or self._input_names is None:
            return results
        loss, outputs = results
        return loss, tuple([t for _, t in self.module.named_outputs(outputs)])

    def _optimizer_step(self) -> None:
        # upstream's optimizer_step
        if self.optimizer is not None:
            self.optimizer.step()

    def _make_optimizer(self, settings: Dict[str, Any]):
        parameters = [p for p in self.module.parameters() if p.requires_grad]
        kind = settings.get("kind", "sgd")
        lr = float(settings.get("learning_rate", 0.01))
        cuda = torch.device(self.device).type == "cuda"
        if kind == "sgd":
            # upstream's: foreach=True (CUDA; torch's default there too, said as upstream says it)
            optimizer = torch.optim.SGD(parameters, lr=lr, foreach=True if cuda else None)
            # As upstream's init_optimizer: SGD's step stays outside dynamo.
            optimizer.step = _outside_dynamo(optimizer.step)
            return optimizer
        if kind == "none":
            return None  # upstream's CI_SKIP_OPTIMIZER: the step ends with the backward
        if kind == "adam":
            # Upstream's Adam: capturable (its step compiled, CUDA graphs) where it can be.
            return torch.optim.Adam(parameters, lr=lr, capturable=cuda, foreach=True if cuda else None)
        raise ValueError(f"unknown optimizer {kind!r}: use sgd, adam or none")

    def _autocast(self):
        if not self.amp:
            return contextlib.nullcontext()
        device_type = torch.device(self.device).type
        return torch.autocast(device_type, dtype=torch.float16 if device_type == "cuda" else torch.bfloat16)

    def _uses_cudagraphs(self) -> bool:
        if not self.compile_settings or torch.device(self.device).type != "cuda":
            return False
        options = self.compile_settings.get("options") or {}
        if "triton.cudagraphs" in options:
            return bool(options["triton.cudagraphs"])
        return self.compile_settings.get("mode") in ("reduce-overhead", "max-autotune")

    def _mark_step(self) -> None:
        # CUDA-graph trees: each call is a new iteration, whose outputs may overwrite the last's
        # (zoobench copies what it keeps before the next call).
        if self._compiled is not None and self._uses_cudagraphs():
            mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
            if mark is not None:
                mark()


def _keyword_call_of(module: torch.nn.Module, loss_rule: str):
    """(the model, its input names) for a model the exporter wrapped to take positional inputs
    (model_bundle.FlatOutputs: it calls `model(**dict(zip(input_names, inputs)))`) whose loss is
    the same from the model's own output as from the wrapper's: the first output (the
    HuggingFace models' own loss), or upstream's reduce_to_scalar_loss where the wrapper gives
    what that reduces (TorchBench's hf_* models, UpstreamLossOutputs). Else (None, None)."""
    from zoo_export.model_bundle import FlatOutputs
    from zoo_export.sources.torchbench_transformers import UpstreamLossOutputs

    if not isinstance(module, FlatOutputs):
        return None, None
    if loss_rule == "first_output" or isinstance(module, UpstreamLossOutputs):
        return module.model, list(module.input_names)
    return None, None


def _outside_dynamo(fn):
    """fn as dynamo leaves it: called, never traced (a graph break where it is called)."""
    dynamo = getattr(torch, "_dynamo", None)
    return dynamo.disable(fn) if dynamo is not None and hasattr(dynamo, "disable") else fn


def _torch_helper(module: str, name: str):
    """One of upstream's helpers that torch ships (torch >= 2), or None."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


# Looked up once, outside any compiled function (dynamo would break the graph at an import).
_UPSTREAM_CLONE_INPUTS = _torch_helper("torch._dynamo.utils", "clone_inputs")
_UPSTREAM_COLLECT_RESULTS = _torch_helper("torch._dynamo.testing", "collect_results")
_UPSTREAM_REDUCE_TO_SCALAR_LOSS = _torch_helper("torch._dynamo.testing", "reduce_to_scalar_loss")


def _clone_inputs_here(inputs):
    if isinstance(inputs, dict):
        return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    return [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]


def _collect_nothing(*_arguments) -> None:
    return None


# Upstream's helpers, called by these names from the training step as upstream's harness calls
# them (torch before 2 has neither: stand-ins that do what the step needs of them). zoobench
# reads the gradients, parameters and buffers itself after the step; collect_results is called
# for what it does to dynamo's graph.
clone_inputs = _UPSTREAM_CLONE_INPUTS or _clone_inputs_here
collect_results = _UPSTREAM_COLLECT_RESULTS or _collect_nothing


def _clear_gradients(optimizer, module) -> None:
    # Upstream's optimizer_zero_grad: the module's own when there is no optimizer.
    if optimizer is not None:
        optimizer.zero_grad(set_to_none=True)
    else:
        module.zero_grad(set_to_none=True)


# Upstream's optimizer_zero_grad runs outside dynamo (torch._disable_dynamo(recursive=True)).
_clear_gradients = _outside_dynamo(_clear_gradients)


def graph_break_reasons(counters, limit: int = 50) -> List[Dict[str, Any]]:
    """Dynamo's graph breaks as [{reason, count}], most frequent first (its
    counters["graph_break"], what upstream's --print-graph-breaks logs): which break makes a
    count differ from upstream's. Each reason cut at 300 characters."""
    ranked = sorted(((str(reason), int(count)) for reason, count in
                     counters["graph_break"].items() if count > 0),
                    key=lambda item: (-item[1], item[0]))
    return [{"reason": reason[:300], "count": count} for reason, count in ranked[:limit]]


def _compilation_metrics() -> List[Any]:
    """Dynamo's record of each frame it compiled or gave up on (torch >= 2.1), or []."""
    try:
        from torch._dynamo.utils import get_compilation_metrics
    except ImportError:
        return []
    return list(get_compilation_metrics())


def _time_spent() -> Dict[str, float]:
    """Dynamo's seconds by compile phase so far in this process (dynamo_timed's totals,
    cumulative: torch._dynamo.reset() keeps them), or {} where torch has no such record."""
    try:
        from torch._dynamo.utils import calculate_time_spent
    except ImportError:
        return {}
    return {str(k): float(v) for k, v in calculate_time_spent().items()}


def phase_seconds_since(before: Dict[str, float], after: Dict[str, float]) -> Dict[str, float]:
    """The seconds each of dynamo's compile phases took between two readings of its cumulative
    totals, rounded to milliseconds, phases that took none left out. `total_wall_time` is what
    upstream's harness writes as an accuracy row's compilation_latency (output_signpost): the
    compile measured upstream's way, beside the wall time of the first calls (compile_s)."""
    out = {}
    for phase, seconds in after.items():
        spent = round(seconds - before.get(phase, 0.0), 3)
        if spent > 0:
            out[phase] = spent
    return out


def _clear_compilation_metrics() -> None:
    try:
        from torch._dynamo.utils import clear_compilation_metrics
    except ImportError:
        return
    clear_compilation_metrics()


def dynamo_stats(counters) -> Dict[str, int]:
    """Upstream's get_dynamo_stats() (benchmarks/dynamo/common.py), the counters its CSVs carry,
    computed the same way from dynamo's counters."""
    graph_breaks = counters["graph_break"]
    return {
        "calls_captured": int(counters["stats"]["calls_captured"]),
        "unique_graphs": int(counters["stats"]["unique_graphs"]),
        "fallbacks_to_eager": int(counters["frames"]["total"] - counters["frames"]["ok"]),
        "graph_breaks": int(sum(graph_breaks.values())),
        "unique_graph_breaks": len([k for k, v in graph_breaks.items() if v > 0]),
        "autograd_captures": int(counters["compiled_autograd"]["captures"]),
        "autograd_compiles": int(counters["compiled_autograd"]["compiles"]),
        "cudagraph_skips": int(counters["inductor"]["cudagraph_skips"]),
    }


def compile_arguments(settings: Dict[str, Any]) -> Dict[str, Any]:
    """torch.compile's keyword arguments for zoobench's compile settings (backend, mode,
    options). torch.compile refuses a mode together with options, which Inductor with switches
    turned off needs (inductor:reduce-overhead without pattern_matcher): Inductor applies a mode
    as its options (list_mode_options) and then the given ones, so the mode's options with ours
    over them are the same compilation."""
    kwargs: Dict[str, Any] = {"backend": settings["backend"]}
    mode, options = settings.get("mode"), settings.get("options")
    if mode and options and settings["backend"] == "inductor":
        from torch._inductor import list_mode_options

        options = {**list_mode_options(mode, None), **options}
        mode = None
    if mode:
        kwargs["mode"] = mode
    if options:
        kwargs["options"] = options
    return kwargs


def fresh_compile_cache():
    """Inductor's and Triton's caches in a new temporary folder (removed on exit), as upstream's
    --cold-start-latency does: compile times are cold, and nothing leaks between models."""
    try:
        from torch._inductor.utils import fresh_cache  # PyTorch >= 2.8
    except ImportError:
        from torch._inductor.utils import fresh_inductor_cache as fresh_cache
    return fresh_cache()


def reduce_to_scalar_loss(value: Any) -> Optional[torch.Tensor]:
    """upstream's reduce_to_scalar_loss, as zoobench's C++ (zoo/training_loss.cpp) computes it:
    a tensor's sum / numel; the mean of a list, tuple or dict's parts; non-floating ignored; and,
    as upstream's, the logits alone of the transformers outputs it names (LOGITS_LOSS_OUTPUTS)."""
    if isinstance(value, torch.Tensor):
        if not (value.is_floating_point() or value.is_complex()):
            return None
        return value.sum() / max(value.numel(), 1)
    if type(value).__name__ in LOGITS_LOSS_OUTPUTS:
        return reduce_to_scalar_loss(value.logits)  # upstream's rule for these outputs
    if isinstance(value, dict) or (hasattr(value, "keys") and hasattr(value, "__getitem__")):
        parts = [reduce_to_scalar_loss(value[k]) for k in value.keys()]
    elif isinstance(value, (list, tuple)):
        parts = [reduce_to_scalar_loss(v) for v in value]
    else:
        return None
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total / len(parts)


def _all_floating(value: Any) -> bool:
    # Written for dynamo: this runs inside the compiled training step, where a generator
    # expression is a frame dynamo gives up on (a fallbacks_to_eager) and bool() of a list or
    # tuple a graph break, neither of which upstream's step has.
    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    if isinstance(value, dict):
        parts = list(value.values())
    elif isinstance(value, (list, tuple)):
        parts = list(value)
    else:
        return False
    for part in parts:
        if not _all_floating(part):
            return False
    return len(parts) > 0


def training_loss(outputs: Any, rule: str, scale: float) -> torch.Tensor:
    if rule == "first_output":
        first = outputs
        if isinstance(outputs, (list, tuple)) and outputs:
            first = outputs[0]
        elif isinstance(outputs, dict) and outputs:
            first = next(iter(outputs.values()))
        if not isinstance(first, torch.Tensor):
            raise RuntimeError("training.loss is first_output but the first output is not a tensor")
        loss = first if first.numel() == 1 else reduce_to_scalar_loss(first)
    elif _UPSTREAM_REDUCE_TO_SCALAR_LOSS is not None and _all_floating(outputs):
        # torch._dynamo.testing's, upstream's loss (the same value as zoobench's, which also
        # takes outputs with integer parts)
        loss = _UPSTREAM_REDUCE_TO_SCALAR_LOSS(outputs)
    else:
        loss = reduce_to_scalar_loss(outputs)
    if loss is None:
        raise RuntimeError("the model's outputs hold no floating tensor to build a training loss from")
    # upstream's scaled_compute_loss divides by 1000 (times 0.001 can round otherwise)
    return loss if scale == 1.0 else loss / (1.0 / scale)
