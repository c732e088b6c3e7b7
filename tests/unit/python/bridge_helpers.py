"""Python functions the embedded-Python tests call (tests/unit/python/embedded_python_test.cpp)."""

import torch


class Box:
    """An object kept on the C++ side between calls."""

    def __init__(self, settings):
        self.settings = settings
        self.calls = 0

    def add_one_in_place(self, tensor):
        tensor.add_(1)
        self.calls += 1
        return tensor

    def echo(self, *values):
        return values

    def describe(self, value):
        return {"type": type(value).__name__, "settings": self.settings, "calls": self.calls}

    def fail(self, message):
        raise_deep(message)


def make_box(settings):
    return Box(settings)


def raise_deep(message):
    raise ValueError(message)


def torch_version(_argument):
    return {"torch": torch.__version__}
