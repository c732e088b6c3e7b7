"""What a source hands to the exporter: a module whose forward takes a flat tuple of tensors, the
exact inputs, their spec, and how to export it. Plus the helpers sources share: seeding, input
generation, dropout removal, output flattening and positional wrappers."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

SEED = 1337  # upstream's benchmarks/dynamo seed


class SourceUnavailable(Exception):
    """The model cannot be built with this python (a library is missing, a checkout is needed).
    The message is the reason recorded in the zoo index."""


@dataclass
class InputSpec:
    name: str
    dtype: str
    shape: List[int]
    init: str  # randn | rand | randint:<low>:<high> | ones | zeros | saved
    note: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        d = {"name": self.name, "dtype": self.dtype, "shape": list(self.shape), "init": self.init}
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class ExportableModel:
    module: nn.Module                      # forward(*inputs); eval.pt and (default) train.pt
    inputs: Tuple[torch.Tensor, ...]
    input_specs: List[InputSpec]
    source: str                            # "torchvision:resnet18", "hf:BertForMaskedLM", ...
    batch_size: int
    method: str = "trace"                  # "trace" or "script"
    train_module: Optional[nn.Module] = None  # a different wrapper for training, sharing weights
    output_names: Optional[List[str]] = None
    deepcopy: bool = True
    loss_scale: float = 1.0
    # manifest training.loss: upstream's reduce_to_scalar_loss, or the model's own loss
    # (outputs[0], as upstream's huggingface.py compute_loss) when its inputs include labels
    loss: str = "mean_of_floating_outputs"
    keep_dropout: bool = False             # leave dropout active in train.pt
    details: Dict[str, Any] = field(default_factory=dict)  # source-specific manifest facts
    # user TorchScript: the module is saved as it is (no tracing, never run)
    prebuilt_script: Optional[torch.jit.ScriptModule] = None


def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def make_input(name: str, shape: Sequence[int], init: str = "randn",
               dtype: torch.dtype = torch.float32, note: Optional[str] = None):
    """A tensor drawn from the global (seeded) generator and its spec."""
    shape = [int(s) for s in shape]
    if init == "randn":
        t = torch.randn(shape, dtype=dtype)
    elif init == "rand":
        t = torch.rand(shape, dtype=dtype)
    elif init.startswith("randint:"):
        _, low, high = init.split(":")
        dtype = dtype if not dtype.is_floating_point else torch.int64
        t = torch.randint(int(low), int(high), shape, dtype=dtype)
    elif init == "ones":
        t = torch.ones(shape, dtype=dtype)
    elif init == "zeros":
        t = torch.zeros(shape, dtype=dtype)
    else:
        raise ValueError(f"unknown init {init!r}")
    return t, InputSpec(name, dtype_name(t.dtype), shape, init, note)


def spec_of_saved(name: str, t: torch.Tensor, note: Optional[str] = None) -> InputSpec:
    return InputSpec(name, dtype_name(t.dtype), list(t.shape), "saved", note)


_DROPOUT_TYPES = (nn.Dropout, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
if hasattr(nn, "Dropout1d"):
    _DROPOUT_TYPES = _DROPOUT_TYPES + (nn.Dropout1d,)


def disable_dropout(module: nn.Module) -> int:
    """Sets every dropout probability in `module` to 0 (nn.Dropout*, and float attributes whose
    name says drop: MultiheadAttention.dropout, timm's DropPath.drop_prob, transformers'
    attention_dropout...). Returns how many were non-zero. Upstream zeroes them for accuracy
    runs so that training is deterministic."""
    changed = 0
    for m in module.modules():
        if isinstance(m, _DROPOUT_TYPES):
            if m.p:
                changed += 1
            m.p = 0.0
            continue
        for attr, value in list(vars(m).items()):
            if "drop" in attr.lower() and isinstance(value, float) and 0.0 < value < 1.0:
                setattr(m, attr, 0.0)
                changed += 1
    return changed


def flatten_outputs(out: Any, prefix: str = "output") -> List[Tuple[str, torch.Tensor]]:
    """(name, tensor) pairs of a (nested) output in order; None and non-tensors are dropped.
    Mappings (a transformers ModelOutput is one) keep their key names."""
    pairs: List[Tuple[str, torch.Tensor]] = []
    if isinstance(out, torch.Tensor):
        pairs.append((prefix, out))
    elif isinstance(out, dict) or (hasattr(out, "keys") and hasattr(out, "__getitem__")):
        for key in out.keys():
            name = key if prefix == "output" else f"{prefix}.{key}"
            pairs.extend(flatten_outputs(out[key], name))
    elif isinstance(out, (list, tuple)):
        for i, item in enumerate(out):
            pairs.extend(flatten_outputs(item, f"{prefix}[{i}]"))
    return pairs


def flatten_structure(obj: Any) -> Tuple[List[torch.Tensor], Callable[[Sequence[torch.Tensor]], Any]]:
    """Tensors of a nested list/tuple/dict and a function rebuilding the structure from them."""
    leaves: List[torch.Tensor] = []

    def walk(o):
        if isinstance(o, torch.Tensor):
            leaves.append(o)
            index = len(leaves) - 1
            return lambda flat: flat[index]
        if isinstance(o, dict):
            parts = {k: walk(v) for k, v in o.items()}
            return lambda flat: {k: f(flat) for k, f in parts.items()}
        if isinstance(o, (list, tuple)):
            parts_l = [walk(v) for v in o]
            kind = type(o) if type(o) in (list, tuple) else list
            return lambda flat: kind(f(flat) for f in parts_l)
        return lambda flat: o

    rebuild = walk(obj)
    return leaves, rebuild


class StructuredInputs(nn.Module):
    """Takes flat positional tensors and calls the wrapped model with the original structure
    (positional args, kwargs, lists of images...). Tracing records only the tensor ops, so the
    rebuilding costs nothing in the TorchScript graph."""

    def __init__(self, model: nn.Module, rebuild: Callable[[Sequence[torch.Tensor]], Any],
                 call_with_kwargs: bool = False):
        super().__init__()
        self.model = model
        self._rebuild = rebuild
        self._kwargs = call_with_kwargs

    def forward(self, *flat: torch.Tensor):
        args = self._rebuild(flat)
        if self._kwargs:
            return self.model(**args)
        if isinstance(args, (list, tuple)):
            return self.model(*args)
        return self.model(args)


class FlatOutputs(nn.Module):
    """Calls `model(**dict(zip(names, inputs)))` and returns its tensors as a flat tuple, so
    that mapping outputs (transformers' ModelOutput) become plain TorchScript values."""

    def __init__(self, model: nn.Module, input_names: Sequence[str]):
        super().__init__()
        self.model = model
        self.input_names = list(input_names)
        self.output_names: List[str] = []

    def forward(self, *inputs: torch.Tensor):
        pairs = self.named_outputs(self.model(**dict(zip(self.input_names, inputs))))
        self.output_names = [n for n, _ in pairs]  # Python-side only; read by the exporter
        # A list, not a generator expression: a generator is a frame of its own, which dynamo
        # gives up on after a graph break in the model (a fallbacks_to_eager that upstream's
        # harness, which calls the model directly, does not have; hf_GPT2_large's training).
        return tuple([t for _, t in pairs])

    def named_outputs(self, out: Any) -> List[Tuple[str, torch.Tensor]]:
        """The (name, tensor) pairs forward returns: every tensor of the output."""
        return flatten_outputs(out)
