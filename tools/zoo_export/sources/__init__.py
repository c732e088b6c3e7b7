"""Where models come from. Each source module offers the same small interface:

    provides(name) -> bool             the source knows this name without importing its library
    label(name) -> str                 manifest `source`, e.g. "timm:mobilenetv3_large_100"
    default_batch_size(name, training=False) -> int|None   None: the model's own
    unavailable_reason() -> str|None   why it cannot build here (library missing), else None
    build(name, ctx: BuildContext) -> ExportableModel
    scope() -> context manager         optional: held around the model's whole export (a
                                       TorchBench checkout's process state, process_state.py)

`resolve(name, suite, ctx)` picks the source for a model of a suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

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
