"""Where models come from. Each source module offers the same small interface, ModelSource
below (tests/python/test_export_lists.py checks every source against it), and may offer
scope() -> context manager, held around the model's whole export (a TorchBench checkout's
process state, process_state.py). The torch.compile backends call the same build() again from
a manifest's `rebuild` record (tools/zoo_compile/rebuild.py).

`resolve(name, suite, torchbench_dir)` picks the source for a model of a suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Protocol, runtime_checkable

from . import (huggingface, text_encoder, timm_models, torch_geometric_gnn, torchbench_checkout,
               torchbench_synthetic, torchbench_timm, torchbench_transformers,
               torchvision_models)


@dataclass
class BuildContext:
    batch_size: int
    device: str = "cpu"
    training: bool = False
    seq_len: Optional[int] = None
    image_size: Optional[int] = None
    loss_scale: float = 1.0
    torchbench_dir: Optional[str] = None
    hf_attn_implementation: str = "eager"
    options: Dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class ModelSource(Protocol):
    def provides(self, name: str) -> bool:
        """Whether the source knows this name without importing its library."""

    def label(self, name: str) -> str:
        """The manifest's `source`, e.g. "timm:mobilenetv3_large_100"."""

    def default_batch_size(self, name: str, training: bool = False) -> Optional[int]:
        """The batch size when neither the command line nor the suite gives one (None: the
        model's own)."""

    def unavailable_reason(self) -> Optional[str]:
        """Why the source cannot build here (a library missing), else None."""

    def build(self, name: str, ctx: "BuildContext") -> Any:
        """The model as an ExportableModel (model_bundle.py)."""


# Order matters only for names several sources know: our own builds come first (random
# weights, nothing downloaded), then TorchBench names built offline (library architectures,
# the checkout's code with synthetic inputs), a TorchBench checkout last.
EXPLICIT_PREFIXES = {
    "torchvision": torchvision_models,
    "timm": timm_models,
    "hf": huggingface,
    "text_encoder": text_encoder,
    "torchbench": torchbench_checkout,
    "torchbench-synthetic": torchbench_synthetic,
}
# TorchBench names whose checkout build downloads weights, configs or data: built offline
OFFLINE_TORCHBENCH = (torchbench_timm, torchbench_transformers, torch_geometric_gnn,
                      torchbench_synthetic)
# Every source a suite's name can resolve to.
ALL_SOURCES = (text_encoder, torchvision_models, huggingface, timm_models, torchbench_checkout,
               *OFFLINE_TORCHBENCH)


def resolve(name: str, suite: str, torchbench_dir: Optional[str]):
    """(source module, model name for that source) or (None, reason)."""
    if ":" in name:
        prefix, bare = name.split(":", 1)
        if prefix in EXPLICIT_PREFIXES:
            return EXPLICIT_PREFIXES[prefix], bare
        return None, (f"unknown source prefix {prefix!r} "
                      f"(known: {', '.join(sorted(EXPLICIT_PREFIXES))})")
    if text_encoder.provides(name):
        return text_encoder, name
    if torchvision_models.provides(name):
        return torchvision_models, name
    for source in OFFLINE_TORCHBENCH:
        if source.provides(name):
            return source, name
    if suite == "huggingface" or huggingface.provides(name):
        return huggingface, name
    if suite == "timm_models":
        return timm_models, name
    if torchbench_dir and torchbench_checkout.has_model(torchbench_dir, name):
        return torchbench_checkout, name
    if suite == "torchbench" or torchbench_dir:
        where = f" (not found in {torchbench_dir})" if torchbench_dir else ""
        return None, (f"{name} is not built in (torchvision, text encoder) and needs a TorchBench "
                      f"checkout: pass --torchbench-dir DIR{where}")
    return None, (f"no source knows {name!r}: use a torchvision or text encoder name, a timm name "
                  "with --suite timm_models (or timm:NAME), a transformers class with "
                  "--suite huggingface (or hf:NAME), or --torchbench-dir")
