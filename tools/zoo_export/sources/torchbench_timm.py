"""TorchBench's timm_* models, built offline: the timm architecture each names, with TorchBench's
batch sizes and input size (torchbenchmark/util/framework/timm/model_factory.py: the model's
default_cfg["input_size"], for training and eval alike), random weights instead of the
checkout's pretrained=True (a download), and the same create_model arguments.

Read from pytorch/benchmark at 0e83c440; tests/python/test_export_torchbench_offline.py
compares this table with a checkout when one is there.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional

from ..model_bundle import ExportableModel, make_input
from . import timm_models


class TorchBenchTimm(NamedTuple):
    architecture: str  # the model_name its Model passes to TimmModel
    train_batch: int   # DEFAULT_TRAIN_BSIZE
    eval_batch: int    # DEFAULT_EVAL_BSIZE


MODELS: Dict[str, TorchBenchTimm] = {
    "timm_efficientnet": TorchBenchTimm("efficientnet_b0", 32, 64),
    "timm_nfnet": TorchBenchTimm("dm_nfnet_f0", 128, 128),
    "timm_regnet": TorchBenchTimm("regnety_120", 32, 32),
    "timm_resnest": TorchBenchTimm("resnest14d", 32, 32),
    "timm_vision_transformer": TorchBenchTimm("vit_small_patch16_224", 32, 32),
    "timm_vision_transformer_large": TorchBenchTimm("vit_giant_patch14_224", 32, 32),
    "timm_vovnet": TorchBenchTimm("vovnet39a", 32, 32),
}


def provides(name: str) -> bool:
    return name in MODELS


def label(name: str) -> str:
    return f"timm:{MODELS[name].architecture}"


def default_batch_size(name: str, training: bool = False) -> int:
    entry = MODELS[name]
    return entry.train_batch if training else entry.eval_batch


def unavailable_reason() -> Optional[str]:
    return timm_models.unavailable_reason()


def build(name: str, ctx) -> ExportableModel:
    architecture = MODELS[name].architecture
    model = timm_models.create(architecture)
    # TorchBench's TimmConfig: default_cfg["input_size"], not timm's test size
    config = getattr(model, "default_cfg", None) or model.pretrained_cfg  # newer timm: both
    c, h, w = config["input_size"]
    x, spec = make_input("x", [ctx.batch_size, c, h, w], "randn")
    return ExportableModel(module=model, inputs=(x,), input_specs=[spec], source=label(name),
                           batch_size=ctx.batch_size, output_names=["logits"],
                           details={"input_size": [c, h, w], "architecture": architecture,
                                    "torchbench_model": name})
