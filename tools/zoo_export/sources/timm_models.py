"""timm: any timm model name (tags such as `.fcmae_ft_in22k_in1k` included), built as upstream's
benchmarks/dynamo/timm_models.py builds it, but with random weights (pretrained=False)."""

from __future__ import annotations

import sys
from typing import Optional

from ..model_bundle import ExportableModel, SourceUnavailable, make_input


def provides(name: str) -> bool:
    return False  # any name could be a timm name: only the timm_models suite or `timm:` selects it


def label(name: str) -> str:
    return f"timm:{name}"


def default_batch_size(name: str, training: bool = False) -> int:
    return 64


def unavailable_reason() -> Optional[str]:
    try:
        import timm  # noqa: F401
    except ImportError:
        return f"timm is not installed for {sys.executable}"
    return None


def create(name: str):
    """timm.create_model as upstream's runners call it, with random weights."""
    reason = unavailable_reason()
    if reason:
        raise SourceUnavailable(reason)
    import timm

    try:
        return timm.create_model(name, pretrained=False, in_chans=3, scriptable=False,
                                 num_classes=None, drop_rate=0.0, drop_path_rate=None,
                                 drop_block_rate=None)
    except RuntimeError as e:
        if "Unknown model" in str(e):
            raise SourceUnavailable(f"timm {timm.__version__} has no model {name!r}") from None
        raise


def build(name: str, ctx) -> ExportableModel:
    model = create(name)
    from timm.data import resolve_data_config

    # upstream: the test size for inference, the train size for training
    data_config = resolve_data_config({}, model=model, use_test_size=not ctx.training)
    c, h, w = data_config["input_size"]
    x, spec = make_input("x", [ctx.batch_size, c, h, w], "randn")
    return ExportableModel(module=model, inputs=(x,), input_specs=[spec], source=label(name),
                           batch_size=ctx.batch_size, output_names=["logits"],
                           loss_scale=ctx.loss_scale,
                           details={"input_size": [c, h, w],
                                    "data_config": "test size" if not ctx.training else
                                    "train size"})
