"""The small zoo's models (tests/unit/backends/small_zoo.h exports them): hand-made, scripted
(not traced, so train()/eval() switch batch norm as in Python), each with its example inputs.
Also a source in the exporter's sense, build(name, context), so that the Python backends
(python_eager, torch.compile) can rebuild them from their manifests' `rebuild` records."""

from types import SimpleNamespace

import torch
from torch import nn


class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Conv2d(8, 4, 1)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.conv(x))))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        hidden = nn.functional.gelu(self.fc1(x))
        return self.fc2(hidden), hidden


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(50, 16)
        # An int64 buffer used as indices, as HuggingFace's position_ids: a float64 or float16
        # run must leave it int64.
        self.register_buffer("position_ids", torch.arange(5))
        self.position = nn.Embedding(5, 16)
        self.layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                                dropout=0.0)

    def forward(self, ids):
        embedded = self.embedding(ids) + self.position(self.position_ids)
        hidden = self.layer(embedded.transpose(0, 1))
        return {"hidden": hidden, "pooled": hidden.mean(0)}


class HostSync(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        # float() copies to the host and waits: not allowed while a CUDA graph captures.
        if float(y.abs().sum()) > 0.0:
            y = y * 2.0
        return y


class HostCopy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x).cpu().to(x.device) * 2.0


class KvCache(nn.Module):
    """llama's pattern: a cache kept in a plain tensor attribute (no buffer), moved to the
    inputs' device and written in forward. torch.export refuses the write into what it takes
    for a constant; the exporter retries with the attribute registered as a buffer."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 4))
        self.cache = torch.zeros(3, 4)

    def forward(self, x):
        self.cache = self.cache.to(x)
        self.cache[:] = x
        return self.cache * self.scale


def make(name):
    torch.manual_seed(0)
    if name == "conv_bn_relu":
        return ConvBnRelu(), (torch.randn(2, 3, 8, 8),)
    if name == "mlp":
        return Mlp(), (torch.randn(4, 16),)
    if name == "encoder_layer":
        return EncoderLayer(), (torch.randint(0, 50, (2, 5)),)
    if name == "host_copy":
        return HostCopy(), (torch.randn(4, 8),)
    if name == "kv_cache":
        return KvCache(), (torch.randn(3, 4),)
    return HostSync(), (torch.randn(4, 8),)


def build(name, context=None):
    """What zoo_compile's rebuild needs of a source: the module (and its training twin)."""
    module, _ = make(name)
    return SimpleNamespace(module=module, train_module=None, keep_dropout=False)
