"""TorchBench models whose data never exists offline but whose network is small and
self-contained: the network from the checkout's own code files, fed synthetic inputs of the
shapes TorchBench feeds it. Manifests say so (source `torchbench-synthetic:`, details.inputs).

  pytorch_stargan          the checkout's model.py Generator(64, c_dim 5, 6 blocks) as its
                           Solver builds it; TorchBench feeds CelebA images (downloaded by its
                           install.py): here random 128x128 images in [-1, 1] and 0/1 labels
  Super_SloMo              the checkout's model_wrapper.Model (two UNets, back-warping, the
                           VGG16 perceptual loss) with VGG16 weights=None instead of ImageNet
                           weights; TorchBench feeds frames of its Adobe240 sample (downloaded):
                           here random 352x352 frames and frame indices 0..6
  yolov3                   the checkout's yolo_models.Darknet(cfg/yolov3-spp.cfg, 512) with
                           TorchBench's own eval input, torch.rand(batch, 3, 384, 512): its
                           __init__.py refuses to load without the coco128 data, which eval
                           never reads (training does: train.pt is the same network in train
                           mode on that input, not TorchBench's training loop)
  functorch_maml_omniglot  its nn.Sequential, written in its __init__.py (copied here: the file
                           cannot be imported without torchbench's data); TorchBench feeds the
                           first support set of maml_omniglot/batch.pt (downloaded): here random
                           28x28 images, n_way 5 x k_spt 1 as TorchBench's maml synthesizes them

The model folder's own __init__.py is never run: it loads the data that is missing. Its other
files are imported as a package of their own (relative imports work), inside the process-state
scope of a checkout model.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from typing import Callable, Dict, NamedTuple, Optional
from unittest import mock

import torch
from torch import nn

from .. import process_state
from ..model_bundle import ExportableModel, SourceUnavailable, make_input, spec_of_saved
from . import torchbench_checkout


class Synthetic(NamedTuple):
    train_batch: int    # TorchBench's DEFAULT_TRAIN_BSIZE
    eval_batch: int     # DEFAULT_EVAL_BSIZE
    inputs: str         # what the inputs are, for the manifest
    builder: Callable   # (checkout, batch, device) -> (module, inputs, specs)


def provides(name: str) -> bool:
    return name in MODELS


def label(name: str) -> str:
    return f"torchbench-synthetic:{name}"


def default_batch_size(name: str, training: bool = False) -> int:
    return MODELS[name].train_batch if training else MODELS[name].eval_batch


def unavailable_reason() -> Optional[str]:
    return None


def scope():
    return process_state.checkout_scope()


_PACKAGE_ROOT = "_zoobench_checkout_code"


@contextlib.contextmanager
def _model_package(checkout: str, name: str):
    """The model folder as package _zoobench_checkout_code.<name>, its __init__.py not run. It
    stays in sys.modules after the build: torch.compile's dynamo imports the module of every
    global the model's code reads (Super_SloMo's failed with ModuleNotFoundError when it was
    removed, 2026-12-05). A package of the same name from another checkout goes first."""
    folder = torchbench_checkout.model_dir(checkout, name)
    if folder is None:
        raise SourceUnavailable(f"{checkout} has no torchbenchmark/models/{name}")
    package = f"{_PACKAGE_ROOT}.{name}"
    registered = sys.modules.get(package)
    if registered is not None and list(getattr(registered, "__path__", [])) != [folder]:
        for key in [k for k in sys.modules if k == package or k.startswith(package + ".")]:
            del sys.modules[key]
    if _PACKAGE_ROOT not in sys.modules:
        root = types.ModuleType(_PACKAGE_ROOT)
        root.__path__ = []
        sys.modules[_PACKAGE_ROOT] = root
    if package not in sys.modules:
        module = types.ModuleType(package)
        module.__path__ = [folder]
        sys.modules[package] = module
    old_dont_write_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # the checkout may be read-only
    try:
        yield package
    finally:
        sys.dont_write_bytecode = old_dont_write_bytecode


def _stargan(checkout: str, batch: int, device: str):
    with _model_package(checkout, "pytorch_stargan") as package:
        code = importlib.import_module(f"{package}.model")
        # main.py's defaults, as its Solver builds G: g_conv_dim 64, c_dim 5, g_repeat_num 6
        generator = code.Generator(64, 5, 6)
    image, image_spec = make_input("x_real", [batch, 3, 128, 128], "rand",
                                   note="random image scaled to [-1, 1] (CelebA's range)")
    image = image * 2 - 1
    labels = torch.randint(0, 2, (batch, 5)).float()
    label_spec = spec_of_saved("c_trg", labels, "0/1 target attributes (5 CelebA attributes)")
    return generator, (image, labels), [image_spec, label_spec]


def _super_slomo(checkout: str, batch: int, device: str):
    import torchvision

    original = torchvision.models.vgg16

    def vgg16_without_weights(*args, weights=None, **kwargs):
        return original(*args, weights=None, **kwargs)  # TorchBench's ImageNet weights: a download

    with _model_package(checkout, "Super_SloMo") as package, \
            mock.patch.object(torchvision.models, "vgg16", vgg16_without_weights):
        wrapper = importlib.import_module(f"{package}.model_wrapper")
        # its back-warping grids are plain attributes, made on this device (not moved by .to)
        model = wrapper.Model(device)
    index, index_spec = make_input("trainFrameIndex", [batch], "randint:0:7",
                                   note="intermediate frame position 0..6")
    frames = [make_input(n, [batch, 3, 352, 352], "randn", note="random 352x352 frame")
              for n in ("I0", "I1", "IFrame")]
    return (model, (index,) + tuple(t for t, _ in frames),
            [index_spec] + [s for _, s in frames])


def _yolov3(checkout: str, batch: int, device: str):
    with _model_package(checkout, "yolov3") as package:
        code = importlib.import_module(f"{package}.yolo_models")
        config = os.path.join(torchbench_checkout.model_dir(checkout, "yolov3"), "cfg",
                              "yolov3-spp.cfg")
        model = code.Darknet(config, 512)  # prep_eval: Darknet(opt.cfg, opt.img_size)
    x, spec = make_input("x", [batch, 3, 384, 512], "rand", note="TorchBench's own eval input")
    return model, (x,), [spec]


def _maml_omniglot(checkout: str, batch: int, device: str):
    # functorch_maml_omniglot/__init__.py's network, as written there (n_way 5, inplace ReLU)
    n_way = 5
    layers = []
    for in_channels in (1, 64, 64):
        layers += [nn.Conv2d(in_channels, 64, 3),
                   nn.BatchNorm2d(64, affine=True, track_running_stats=False),
                   nn.ReLU(inplace=True), nn.MaxPool2d(2, 2)]
    net = nn.Sequential(*layers, nn.Flatten(), nn.Linear(64, n_way))
    x, spec = make_input("x_spt", [n_way * 1, 1, 28, 28], "randn",
                         note="one task's support set: n_way 5 x k_spt 1 images of 28x28")
    return net, (x,), [spec]


MODELS: Dict[str, Synthetic] = {
    "pytorch_stargan": Synthetic(16, 16, "random images in [-1, 1] and 0/1 target labels "
                                     "(CelebA is downloaded by TorchBench's install.py)",
                                 _stargan),
    "Super_SloMo": Synthetic(6, 6, "random frames and frame indices (TorchBench's Adobe240 "
                                "sample is downloaded); VGG16 with random weights",
                             _super_slomo),
    "yolov3": Synthetic(16, 8, "TorchBench's own torch.rand input (its coco128 data is "
                               "downloaded, and needed only for training)", _yolov3),
    "functorch_maml_omniglot": Synthetic(1, 1, "random 28x28 images (maml_omniglot/batch.pt is "
                                            "downloaded)", _maml_omniglot),
}


def build(name: str, ctx) -> ExportableModel:
    checkout = ctx.torchbench_dir
    if not checkout:
        raise SourceUnavailable(f"{name} is built from a TorchBench checkout's code: pass "
                                "--torchbench-dir DIR")
    entry = MODELS[name]
    batch = ctx.batch_size or default_batch_size(name, ctx.training)
    with process_state.checkout_scope():
        module, inputs, specs = entry.builder(os.path.abspath(checkout), batch, ctx.device)
    return ExportableModel(module=module, inputs=tuple(inputs), input_specs=specs,
                           source=label(name), batch_size=batch,
                           details={"inputs": f"synthetic: {entry.inputs}",
                                    "checkout": os.path.abspath(checkout)})
