"""The training step graph (tools/zoo_export/training_step.py, which bench/training_package.py
uses): the forward, the loss and the backward traced into one graph of ATen operators (make_fx
through torch.autograd.grad), taking the parameters as inputs, which the GPU machine compiles as
an AOTInductor package. Checked against PyTorch's autograd on the model itself, on the CPU
(torch 1.13 traces it too); then the bench's own pieces (its dropout switch, its runner)."""

import copy
import os
import subprocess
import sys
import tempfile
import unittest
from types import SimpleNamespace

import torch
from torch import nn

from helpers import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, "bench"))
import training_package  # noqa: E402
from zoo_export import training_step  # noqa: E402


def autograd_step(model, inputs):
    """[loss, gradient per parameter] by the model's own backward."""
    model.zero_grad(set_to_none=True)
    loss = training_package.loss_of(model(*inputs))
    loss.backward()
    return [loss.detach(), *[p.grad for p in model.parameters()]]


def graph_step(graph, model, inputs):
    return graph([p.detach() for p in model.parameters()], list(model.buffers()), list(inputs))


class StepGraph(unittest.TestCase):
    def setUp(self):
        # BERT-style: attention, GELU, layer norm, dropout (switched off: the two sides would
        # draw different masks) and the decoder tied to the token embedding.
        self.model, self.inputs = training_package.build("text_encoder_small", 2, "cpu")
        training_package.disable_dropout(self.model)

    def test_loss_and_gradients_are_autograds(self):
        graph, names, _ = training_step.step_graph(self.model, self.inputs, training_package.loss_of)
        got = graph_step(graph, self.model, self.inputs)
        expected = autograd_step(self.model, self.inputs)
        self.assertEqual(len(got), 1 + len(list(self.model.parameters())))
        self.assertEqual(len(names), len(got) - 1)
        for i, (a, b) in enumerate(zip(got, expected)):
            self.assertTrue(torch.allclose(a, b, rtol=1e-5, atol=1e-7),
                            f"output {i}: largest difference {float((a - b).abs().max())}")

    def test_a_tied_weight_gets_the_gradient_of_each_use(self):
        names = training_step.names_per_parameter(self.model)
        self.assertIn(["token_embedding.weight", "mlm_decoder.weight"], names)
        graph, _, _ = training_step.step_graph(self.model, self.inputs, training_package.loss_of)
        tied = [i for i, n in enumerate(names) if len(n) == 2][0]
        got = graph_step(graph, self.model, self.inputs)[1 + tied]
        expected = autograd_step(self.model, self.inputs)[1 + tied]
        # Through the embedding alone the gradient would miss the decoder's share, most of it.
        self.assertTrue(torch.allclose(got, expected, rtol=1e-5, atol=1e-7))

    def test_the_graph_holds_its_backward(self):
        graph, _, _ = training_step.step_graph(self.model, self.inputs, training_package.loss_of)
        with torch.no_grad():  # no autograd to lean on: the backward must be the graph's own
            got = graph_step(graph, self.model, self.inputs)
        expected = autograd_step(self.model, self.inputs)
        self.assertTrue(all(torch.allclose(a, b, rtol=1e-5, atol=1e-7)
                            for a, b in zip(got, expected)))
        targets = {str(n.target) for n in graph.graph.nodes if n.op == "call_function"}
        self.assertTrue(any("backward" in t for t in targets), sorted(targets)[:20])

    def test_flat_arguments_give_the_same(self):
        graph, _, _ = training_step.step_graph(self.model, self.inputs, training_package.loss_of)
        parameters = [p.detach() for p in self.model.parameters()]
        buffers = list(self.model.buffers())
        flat = training_step.FlatStep(graph, len(parameters), len(buffers))(
            *parameters, *buffers, *self.inputs)
        for a, b in zip(flat, graph_step(graph, self.model, self.inputs)):
            self.assertTrue(torch.equal(a, b))


class StepGraphWithBatchNorm(unittest.TestCase):
    """resnet50's kind of model: batch norm in training mode updates its running statistics,
    which the graph takes as inputs and must update in place as the model's forward does."""

    def test_tracing_leaves_the_model_alone_and_the_graph_updates_the_statistics(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(),
                              nn.Conv2d(8, 4, 1)).train()
        inputs = (torch.randn(2, 3, 8, 8),)
        reference = copy.deepcopy(model)
        graph, _, buffer_names = training_step.step_graph(model, inputs, training_package.loss_of)
        self.assertEqual(buffer_names, ["1.running_mean", "1.running_var", "1.num_batches_tracked"])
        for a, b in zip(model.buffers(), reference.buffers()):  # traced, not run
            self.assertTrue(torch.equal(a, b))
        got = graph_step(graph, model, inputs)
        expected = autograd_step(reference, inputs)
        for a, b in zip(got, expected):
            self.assertTrue(torch.allclose(a, b, rtol=1e-5, atol=1e-7))
        for a, b in zip(model.buffers(), reference.buffers()):  # one step each
            self.assertTrue(torch.allclose(a.float(), b.float(), rtol=1e-6, atol=1e-7))
        self.assertEqual(int(model[1].num_batches_tracked), 1)


class WithoutDropout(unittest.TestCase):
    """--no-dropout and the check use the exporter's disable_dropout on these models."""

    def test_every_dropout_is_off_and_the_model_stays_in_training(self):
        model, _ = training_package.build("text_encoder_small", 2, "cpu")
        model.embedding_dropout.p = 0.1
        for layer in model.encoder.layers:
            layer.dropout.p = layer.dropout1.p = layer.dropout2.p = 0.1
            layer.self_attn.dropout = 0.1
        training_package.disable_dropout(model)
        self.assertTrue(model.training)
        self.assertEqual({m.p for m in model.modules() if isinstance(m, nn.Dropout)}, {0.0})
        self.assertEqual({m.dropout for m in model.modules()
                          if isinstance(m, nn.MultiheadAttention)}, {0.0})


def runner_path() -> str:
    """The runner of the build under test (ctest names it), else the script's own default."""
    build = os.environ.get("ZOOBENCH_BINARY_DIR")
    if build:
        return os.path.join(build, "bench", "bench_training_package_runner")
    return training_package.default_runner()


class PackageRunnerMissing(unittest.TestCase):
    def test_a_package_side_without_the_runner_stops_before_any_side_runs(self):
        done = subprocess.run(
            [sys.executable, os.path.join(REPO_ROOT, "bench", "training_package.py"),
             "--device", "cpu", "--sides", "eager,package", "--runner", "/nonexistent/runner"],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 2)
        self.assertIn("bench_training_package_runner", done.stderr)
        self.assertNotIn('"side"', done.stdout)  # not even the eager side ran


def aoti_on_cuda() -> bool:
    return (torch.cuda.is_available() and hasattr(torch, "export")
            and hasattr(getattr(torch, "_inductor", None), "aoti_compile_and_package"))


@unittest.skipUnless(aoti_on_cuda(), "AOTInductor on CUDA (the GPU machine's torch)")
class PackageThroughTheRunner(unittest.TestCase):
    """The small encoder's step compiled as a package and run by bench_training_package_runner
    (LibTorch's C++ loader): its loss and gradients are the model's autograd, and the runner's
    steps (and the captured graph's replays) run and time."""

    def test_the_runners_outputs_are_autograds_and_its_steps_time(self):
        runner = runner_path()
        if not os.path.exists(runner):  # a build narrowed to other targets (BUILD_TARGETS)
            self.skipTest(f"no {runner}: build bench_training_package_runner")
        model, inputs = training_package.build("text_encoder_small", 2, "cuda")
        training_package.disable_dropout(model)
        with tempfile.TemporaryDirectory() as work:
            args = SimpleNamespace(work=work, warmup=1, iterations=3, no_dropout=True)
            path = os.path.join(work, "step.pt2")
            row, outputs = training_package.package_side_in_cpp(model, inputs, False, path,
                                                                runner, args)
            self.assertEqual(row["steps"], 3)
            self.assertGreater(row["median_ms"], 0)
            check = training_package.check_package(outputs, model, inputs)
            self.assertEqual(check["outputs"], check["expected"])
            # The runner computes with TF32 (the timed runs' numerics), autograd here without:
            # TF32's rounding over a small encoder stays well inside 1e-2; a wrong gradient
            # (a lost tied-weight share, a missed update) is of the gradient's own size.
            self.assertLess(check["worst_relative_difference"], 1e-2)
            row, outputs = training_package.package_side_in_cpp(model, inputs, True, path,
                                                                runner, args)
            self.assertIsNone(outputs)
            self.assertGreater(row["median_ms"], 0)


if __name__ == "__main__":
    unittest.main()
