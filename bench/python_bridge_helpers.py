"""The Python side of bench/python_bridge_bench.cpp: a one-op model, called either from C++
through zoobench's embedded-Python bridge or in a Python loop, to measure the crossing."""

import time

import torch


class OneOp:
    def run(self, inputs):
        return inputs[0] + 1.0

    def loop(self, inputs, count):
        """Seconds per call of run() in a Python loop (the device drained before and after)."""
        device = inputs[0].device
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        for _ in range(count):
            self.run(inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return (time.perf_counter() - start) / count


def make(_settings):
    return OneOp()
