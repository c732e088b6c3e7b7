"""The integration tests' plain models (make_zoo.py exports them), and what the Python backends
rebuild for make_zoo.py's py_* kinds: a source in the exporter's sense, build(name, context),
named by their manifests' `rebuild` records."""

from types import SimpleNamespace

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, width: int = 16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, width), nn.ReLU(), nn.Linear(width, 4))

    def forward(self, x):
        return self.net(x)


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))

    def forward(self, x):
        return self.net(x)


class PyRaiser(Mlp):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("boom from Python on call %d" % self.calls)
        return super().forward(x)


class PyHang(Mlp):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        import time

        self.calls += 1
        while self.calls > 1:
            time.sleep(0.05)
        return super().forward(x)


class PyChanged(Mlp):
    def forward(self, x):
        return self.net[2](torch.tanh(self.net[0](x)))


class Reseeded(Mlp):
    """A value that is neither a parameter nor a buffer (a plain attribute drawn at
    construction): loading eval.pt's weights cannot fix it, only the identity check sees it."""

    def __init__(self):
        super().__init__()
        self.scale = float(torch.rand(()))

    def forward(self, x):
        return self.net(x) * self.scale


_PYTHON_KINDS = {"py_mlp": Mlp, "py_conv": Conv, "py_raiser": PyRaiser, "py_hang": PyHang,
                 "py_changed": PyChanged, "py_reseeded": Reseeded}

def build(name, context):
    """The module that runs in Python for a py_* kind (context.options["kind"])."""
    return SimpleNamespace(module=_PYTHON_KINDS[context.options["kind"]](), train_module=None,
                           keep_dropout=False)
