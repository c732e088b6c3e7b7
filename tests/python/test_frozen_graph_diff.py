"""tools/zoo_diag/frozen_graph_diff.py on a small traced model saved as a repro folder (a
scripted function called twice, three Linear/LayerNorm/ReLU blocks, then a slice assignment into
a new tensor as Longformer does): freezing it changes nothing; faults planted in the frozen graph
are named at their node with the difference the test computes itself; each node's value is the
one it had when produced; a harness that stopped matching the module says so; a missing file is
a usage error. Runs on this machine's CPU with Debian's torch (/usr/bin/python3)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn as nn

from helpers import REPO_ROOT

from zoo_diag import frozen_graph_diff as fgd

TOOL = os.path.join(REPO_ROOT, "tools", "zoo_diag", "frozen_graph_diff.py")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return torch.relu(self.norm(self.lin(x)))  # the relu line


@torch.jit.script
def squash(x, scale):
    return torch.sigmoid(x) * scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Parameter(torch.randn(16))
        self.scale = nn.Parameter(torch.randn(16))
        self.layers = nn.ModuleList([Block() for _ in range(3)])

    def gated(self, x):
        # A scripted function called twice: its ops have the same source and scope in both
        # calls. Freezing folds the first call (its inputs are parameters) into a constant, so
        # pairing the nodes by their order alone would pair the second call with the first.
        return squash(self.gate, self.scale) * squash(x, self.scale)

    def forward(self, x, keep):
        x = self.gated(x)
        for layer in self.layers:
            x = layer(x)
        padded = x.new_zeros(x.shape[0], x.shape[1] + 4)
        padded[:, :x.shape[1]] = x
        return padded.masked_fill(~keep[:, None], 0.0)


def line_of(marker):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(marker))


def frozen_with(rewrite):
    """A transform for diff_frozen_graph: freezing, then REWRITE(graph) on the frozen graph."""
    def transform(module):
        frozen = fgd.freeze_without_numerics(module)
        rewrite(frozen.graph)
        return frozen
    return transform


def node_in(graph, kind, layer):
    """The KIND node of block LAYER: the blocks run in order, one such node each."""
    return [n for n in graph.nodes() if n.kind() == kind][layer]


def relu_to_abs(graph):
    relu = node_in(graph, "aten::relu", 1)
    absolute = graph.create("aten::abs", [relu.input()], 1)
    absolute.output().setType(relu.output().type())
    absolute.insertBefore(relu)
    absolute.copyMetadata(relu)  # the same source line and module path, as a substitution keeps
    relu.output().replaceAllUsesWith(absolute.output())
    relu.destroy()


def scale_weight(factor):
    def rewrite(graph):
        linear = node_in(graph, "aten::linear", 2)
        weight = graph.insertConstant(linear.inputsAt(1).toIValue() * factor)
        weight.node().moveBefore(linear)
        linear.replaceInput(1, weight)
    return rewrite


def bias_grows_each_call(graph):
    linear = node_in(graph, "aten::linear", 0)
    one = graph.insertConstant(1.0)
    grow = graph.create("aten::add_", [linear.inputsAt(2), one, graph.insertConstant(1)], 1)
    grow.insertBefore(linear)
    one.node().moveBefore(grow)
    grow.inputsAt(2).node().moveBefore(grow)


class FrozenGraphDiff(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.model = Model().eval()
        cls.inputs = (torch.randn(6, 16), torch.tensor([True, False, True, True, False, True]))
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model_path = os.path.join(cls.tmp.name, "eval.pt")
        cls.inputs_path = os.path.join(cls.tmp.name, "inputs.pt")
        with torch.no_grad():
            torch.jit.trace(cls.model, cls.inputs).save(cls.model_path)
        torch.save(cls.inputs, cls.inputs_path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def load(self):
        return torch.jit.load(self.model_path).eval()

    def layer_input(self, layer):
        with torch.no_grad():
            x = self.model.gated(self.inputs[0])
            for block in self.model.layers[:layer]:
                x = block(x)
            return x

    def test_freezing_this_model_changes_nothing(self):
        out = os.path.join(self.tmp.name, "report.json")
        done = subprocess.run([sys.executable, TOOL, "--model", self.model_path, "--inputs",
                               self.inputs_path, "--json", out], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("verdict: no_divergence", done.stdout)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["verdict"], "no_divergence")
        self.assertIsNone(report["first"])
        self.assertTrue(report["harness"]["ok"], report["harness"])
        # sigmoid and 2 mul, linear, layer_norm and relu of three layers, new_zeros, slices,
        # copy_, masked_fill; squash(gate) is a constant of the frozen graph.
        self.assertGreaterEqual(report["compared"], 3 + 9 + 5)
        self.assertEqual(report["unmatched"]["unfrozen"]["by_kind"]["aten::sigmoid"], 1)
        self.assertEqual(report["unmatched"]["frozen"]["by_kind"], {"prim::Constant": report[
            "unmatched"]["frozen"]["count"]})

    def test_each_node_is_seen_as_it_was_produced(self):
        module = self.load()
        nodes, output, values = fgd.observe(module.inlined_graph, module, self.inputs)
        with torch.no_grad():
            self.assertTrue(torch.equal(output, module(*self.inputs)))
            last = self.model.layers[2](self.layer_input(2))
        index = {n.kind(): i for i, n in enumerate(nodes)}
        # The new tensor before the slice assignment wrote into it, the slice after.
        self.assertTrue(torch.equal(values[(index["aten::new_zeros"], 0)], torch.zeros(6, 20)))
        self.assertTrue(torch.equal(values[(index["aten::copy_"], 0)], last))
        self.assertTrue(torch.equal(values[(index["aten::masked_fill"], 0)], output))

    def test_a_substituted_op_is_named_at_its_line(self):
        report = fgd.diff_frozen_graph(self.load(), self.inputs, 1e-4, frozen_with(relu_to_abs))
        first = report["first"]
        self.assertEqual(report["verdict"], "diverges")
        self.assertEqual((first["kind"], first["twin_kind"]), ("aten::abs", "aten::relu"))
        self.assertTrue(first["source"].endswith(
            "test_frozen_graph_diff.py:%d" % line_of("# the relu line")), first["source"])
        self.assertEqual(first["scope"], "1(Block)")
        # |relu(x) - abs(x)| is -x where the pre-activation x is negative.
        layer = self.model.layers[1]
        with torch.no_grad():
            pre = layer.norm(layer.lin(self.layer_input(1)))
        self.assertAlmostEqual(first["max_abs"], float((-pre).max()), places=5)
        self.assertEqual(first["differing"], int((pre < -1e-4).sum()))
        self.assertTrue(report["harness"]["ok"])
        # What follows from it differs too (more, after the next linear): the largest five.
        sizes = [row["max_abs"] for row in report["largest"]]
        self.assertEqual(sizes, sorted(sizes, reverse=True))
        self.assertEqual(len(sizes), 5)

    def test_a_wrong_constant_is_named_at_the_op_that_reads_it(self):
        report = fgd.diff_frozen_graph(self.load(), self.inputs, 1e-4,
                                       frozen_with(scale_weight(1.5)))
        first = report["first"]
        self.assertEqual((first["kind"], first["twin_kind"]), ("aten::linear", "aten::linear"))
        self.assertEqual(first["scope"], "2(Block).lin(Linear)")
        with torch.no_grad():
            expected = (self.layer_input(2) @ (0.5 * self.model.layers[2].lin.weight).t()).abs()
        self.assertAlmostEqual(first["max_abs"], float(expected.max()), places=5)
        weight = first["inputs"][1]
        self.assertEqual(weight["from"], "prim::Constant, no unfrozen twin")
        self.assertEqual(first["inputs"][0]["from"], "aten::relu, agrees")

    def test_a_difference_within_tol_is_listed_but_not_a_divergence(self):
        report = fgd.diff_frozen_graph(self.load(), self.inputs, 1e-4,
                                       frozen_with(scale_weight(1 + 1e-6)))
        self.assertEqual(report["verdict"], "no_divergence")
        self.assertEqual(report["largest"][0]["kind"], "aten::linear")
        self.assertTrue(0 < report["largest"][0]["max_abs"] < 1e-4, report["largest"][0])
        self.assertEqual(report["largest"][0]["differing"], 0)

    def test_a_harness_that_differs_from_the_module_says_so(self):
        report = fgd.diff_frozen_graph(self.load(), self.inputs, 1e-4,
                                       frozen_with(bias_grows_each_call))
        self.assertFalse(report["harness"]["ok"])
        self.assertFalse(report["harness"]["frozen"]["module_repeatable"])
        # The frozen copy's write stays in it: the unfrozen side keeps its bias, and the
        # instrumented frozen run (its first call) adds 1 to the first linear's output.
        self.assertEqual(report["first"]["kind"], "aten::linear")
        self.assertAlmostEqual(report["first"]["max_abs"], 1.0, places=5)
        self.assertTrue(report["harness"]["unfrozen"]["equals_module"])
        self.assertIn("HARNESS CHECK FAILED", "\n".join(fgd.report_lines(report, "")))

    def test_a_missing_file_is_a_usage_error(self):
        missing = os.path.join(self.tmp.name, "no-such", "eval.pt")
        done = subprocess.run([sys.executable, TOOL, "--model", missing, "--inputs",
                               self.inputs_path], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn(missing, done.stderr)
        self.assertIn("no such file", done.stderr)


if __name__ == "__main__":
    unittest.main()
