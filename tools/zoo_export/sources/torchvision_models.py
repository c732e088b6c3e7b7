"""torchvision: the TorchBench models that torchvision provides, with random weights, and
vision_maskrcnn (maskrcnn_resnet50_fpn, scripted; it needs torchvision::nms and
torchvision::roi_align when loaded)."""

from __future__ import annotations

from typing import Dict, List, Optional

import torch
from torch import nn

from ..model_bundle import ExportableModel, SourceUnavailable, make_input, spec_of_saved

# TorchBench names that are torchvision classification builders of the same name.
CLASSIFIERS = (
    "alexnet", "densenet121", "mnasnet1_0", "mobilenet_v2", "mobilenet_v3_large", "resnet18",
    "resnet50", "resnet152", "resnext50_32x4d", "shufflenet_v2_x1_0", "squeezenet1_1", "vgg16",
)
MASKRCNN = "vision_maskrcnn"
IMAGE_SIZE = 224
# vision_maskrcnn: COCO-sized images (torchvision's transform resizes them to min side 800).
MASKRCNN_IMAGE = (480, 640)
MASKRCNN_OBJECTS = 3


def provides(name: str) -> bool:
    return name in CLASSIFIERS or name == MASKRCNN


def label(name: str) -> str:
    return "torchvision:maskrcnn_resnet50_fpn" if name == MASKRCNN else f"torchvision:{name}"


# TorchBench's DEFAULT_TRAIN_BSIZE, DEFAULT_EVAL_BSIZE of each (torchbenchmark/models/<name>/
# __init__.py at 0e83c440; test_export_torchbench_offline.py compares them with a checkout).
# vision_maskrcnn: 1 for both, and upstream's dynamo runner never changes it.
TORCHBENCH_BATCH_SIZES = {
    "alexnet": (128, 128), "densenet121": (256, 64), "mnasnet1_0": (32, 32),
    "mobilenet_v2": (96, 16), "mobilenet_v3_large": (32, 32), "resnet18": (16, 8),
    "resnet50": (32, 32), "resnet152": (32, 32), "resnext50_32x4d": (8, 8),
    "shufflenet_v2_x1_0": (128, 64), "squeezenet1_1": (32, 16), "vgg16": (64, 4),
    MASKRCNN: (1, 1),
}


def default_batch_size(name: str, training: bool = False) -> int:
    train, evaluation = TORCHBENCH_BATCH_SIZES.get(name, (16, 16))
    return train if training else evaluation


def unavailable_reason() -> Optional[str]:
    try:
        import torchvision  # noqa: F401
    except ImportError as e:
        return f"torchvision is not installed for this python ({e})"
    return None


def build(name: str, ctx) -> ExportableModel:
    reason = unavailable_reason()
    if reason:
        raise SourceUnavailable(reason)
    if name == MASKRCNN:
        return _build_maskrcnn(ctx)
    import torchvision

    builder = getattr(torchvision.models, name, None)
    if builder is None or not callable(builder):
        raise SourceUnavailable(f"torchvision {torchvision.__version__} has no model {name!r}")
    model = _construct(builder)
    size = ctx.image_size or IMAGE_SIZE
    x, spec = make_input("x", [ctx.batch_size, 3, size, size], "randn")
    return ExportableModel(module=model, inputs=(x,), input_specs=[spec], source=label(name),
                           batch_size=ctx.batch_size, output_names=["logits"],
                           details={"image_size": size})


def _construct(builder, **kwargs):
    # torchvision >= 0.13 takes weights=None; older ones pretrained=False. Never download.
    try:
        return builder(weights=None, **kwargs)
    except TypeError:
        return builder(pretrained=False, **kwargs)


class MaskRCNNInference(nn.Module):
    """forward(images[B,3,H,W], boxes, labels, masks) -> one dict of detections per image
    (boxes, labels, scores, masks). The targets are only there so that eval.pt and train.pt
    share one inputs.pt; inference ignores them."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, images: torch.Tensor, boxes: torch.Tensor, labels: torch.Tensor,
                masks: torch.Tensor) -> List[Dict[str, torch.Tensor]]:
        image_list = [images[i] for i in range(images.size(0))]
        if torch.jit.is_scripting():
            # scripted torchvision detection models always return (losses, detections)
            losses, detections = self.model(image_list, None)
        else:
            detections = self.model(image_list, None)
        return detections


class MaskRCNNTraining(nn.Module):
    """forward(images, boxes[B,N,4], labels[B,N], masks[B,N,H,W]) -> the loss dict."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, images: torch.Tensor, boxes: torch.Tensor, labels: torch.Tensor,
                masks: torch.Tensor) -> Dict[str, torch.Tensor]:
        image_list = [images[i] for i in range(images.size(0))]
        targets: List[Dict[str, torch.Tensor]] = []
        for i in range(images.size(0)):
            targets.append({"boxes": boxes[i], "labels": labels[i], "masks": masks[i]})
        if torch.jit.is_scripting():
            losses, detections = self.model(image_list, targets)
        else:
            losses = self.model(image_list, targets)
        return losses


def _build_maskrcnn(ctx) -> ExportableModel:
    import torchvision

    detection = torchvision.models.detection
    # Random weights give near-uniform class scores (about 1/91), all below torchvision's 0.05
    # score threshold: inference would detect nothing and never run the mask head. Keep every
    # score and, as upstream does for its accuracy runs, only the top 5 detections per image.
    kwargs = dict(box_score_thresh=0.0, box_detections_per_img=5)
    try:
        model = detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, **kwargs)
    except TypeError:
        model = detection.maskrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=False,
                                                **kwargs)
    bs = ctx.batch_size
    h, w = MASKRCNN_IMAGE
    n = MASKRCNN_OBJECTS
    images, image_spec = make_input("images", [bs, 3, h, w], "rand")
    # Targets (train.pt): n boxes per image inside the image, each with a filled mask.
    x1 = torch.rand(bs, n) * (w / 2)
    y1 = torch.rand(bs, n) * (h / 2)
    bw = w / 8 + torch.rand(bs, n) * (w / 3)
    bh = h / 8 + torch.rand(bs, n) * (h / 3)
    boxes = torch.stack([x1, y1, x1 + bw, y1 + bh], dim=-1)
    labels = torch.randint(1, 91, (bs, n), dtype=torch.int64)
    masks = torch.zeros(bs, n, h, w, dtype=torch.uint8)
    for b in range(bs):
        for i in range(n):
            bx = boxes[b, i].round().long().tolist()
            masks[b, i, bx[1]:bx[3], bx[0]:bx[2]] = 1
    specs = [
        image_spec,
        spec_of_saved("boxes", boxes, "training targets: x1,y1,x2,y2 pixels inside the image"),
        spec_of_saved("labels", labels, "training targets: COCO class ids 1..90"),
        spec_of_saved("masks", masks, "training targets: 1 inside each box"),
    ]
    return ExportableModel(
        module=MaskRCNNInference(model), train_module=MaskRCNNTraining(model),
        inputs=(images, boxes, labels, masks), input_specs=specs, source=label(MASKRCNN),
        batch_size=bs, method="script",
        details={"box_score_thresh": 0.0, "box_detections_per_img": 5,
                 "requires_ops": ["torchvision::nms", "torchvision::roi_align"]})
