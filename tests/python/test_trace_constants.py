"""tools/zoo_diag/trace_constants.py: the tensor constants of a TorchScript file, with device,
dtype and first user, from every submodule's graph. Traced here on the CPU (the device question
it answers is checked on the GPU with --selftest, docs/performance.md)."""

import contextlib
import io
import os
import sys
import tempfile
import unittest

import torch

from helpers import REPO_ROOT  # noqa: F401 (puts tools/ on sys.path)
from zoo_diag import trace_constants


class Halve(torch.nn.Module):
    def forward(self, x):
        return x * 0.5


class AddOne(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = torch.tensor(1.0)  # neither parameter nor buffer: baked into the trace

    def forward(self, x):
        return x + self.offset


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([Halve(), AddOne(), Halve(), AddOne()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x / 8.0


class TraceConstants(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "outer.pt")
        torch.jit.trace(Outer(), torch.randn(2, 3)).save(self.path)

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_submodule_graph_is_read(self):
        module = torch.jit.load(self.path)
        # What the tool should find, counted from the graphs themselves, one per distinct graph.
        expected = set()
        for m in [module, *module.modules()]:
            for name in m._c._method_names():
                graph = m._c._get_method(name).graph
                for node in graph.nodes():
                    if node.kind() == "prim::Constant" and node.hasAttribute("value") and node.kindOf("value") == "t":
                        expected.add((m._c._type().qualified_name(), str(node)))
        found = trace_constants.tensor_constants(module)
        self.assertEqual(len(found), len(expected))
        kinds = sorted((str(t.dtype), float(t), user) for t, user in found)
        # x / 8.0 and each layer type's constant: 0.5 (float64, a Python number), 1.0 (float32).
        self.assertIn(("torch.float64", 8.0, "aten::div"), kinds)
        self.assertIn(("torch.float64", 0.5, "aten::mul"), kinds)
        self.assertIn(("torch.float32", 1.0, "aten::add"), kinds)
        for t, _ in found:
            self.assertEqual(t.device.type, "cpu")

    def test_report_and_exit_status(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertTrue(trace_constants.report(self.path, 10))
        self.assertIn("tensor constants", out.getvalue())
        self.assertIn("float64", out.getvalue())
        argv = sys.argv
        try:
            sys.argv = ["trace_constants.py", os.path.join(self.tmp.name, "missing.pt")]
            with contextlib.redirect_stdout(io.StringIO()) as missing:
                self.assertEqual(trace_constants.main(), 1)
            self.assertIn("does not load", missing.getvalue())
        finally:
            sys.argv = argv


if __name__ == "__main__":
    unittest.main()
