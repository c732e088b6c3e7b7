"""tools/zoo_export/training_step as the exporter uses it (the step graph itself against
autograd: test_training_package.py): the manifest contract's order, and the exporter's refusal
where the torch at hand cannot compile packages (torch < 2.6: this machine). Where it can (the
GPU machine), a CPU package of a small conv/batch-norm model is compiled, loaded and checked
against the model's own autograd: loss, gradients and the running statistics."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import torch
from torch import nn

from helpers import REPO_ROOT, run_cli
from zoo_export import aoti_export, training_step

CAN_COMPILE = aoti_export.unsupported_reason() is None


def mean_loss(outputs):
    return outputs.mean()


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


class TiedLanguageModel(nn.Module):
    """An embedding whose weight is also the output projection's (as GPT-2's)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 6)
        self.hidden = nn.Linear(6, 6)
        self.head = nn.Linear(6, 11, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.hidden(self.embed(ids))))


def reference_step(model, inputs):
    """The model's own step: loss, gradients (autograd) and buffers after the forward."""
    model.zero_grad(set_to_none=True)
    loss = mean_loss(model(*inputs))
    gradients = torch.autograd.grad(loss, list(model.parameters()))
    return loss.detach(), gradients, [b.clone() for b in model.buffers()]


class StepContract(unittest.TestCase):
    def test_the_contract_names_what_goes_in_and_comes_out_in_order(self):
        model = TiedLanguageModel()
        _, parameter_names, buffer_names = training_step.step_graph(
            model, (torch.randint(0, 11, (2, 5)),), mean_loss)
        contract = training_step.step_contract(parameter_names, buffer_names, 1, dropout=False)
        self.assertEqual(contract["parameters"], [n for n, _ in model.named_parameters()])
        self.assertEqual(contract["outputs"],
                         ["loss", "grad:embed.weight", "grad:hidden.weight", "grad:hidden.bias"])
        self.assertEqual((contract["inputs"], contract["buffers"]), (1, []))


@unittest.skipIf(CAN_COMPILE, "this torch compiles packages (the test below checks one)")
class RefusedWhereTorchCannotCompile(unittest.TestCase):
    def test_the_manifest_records_why_there_is_no_training_package(self):
        with tempfile.TemporaryDirectory() as zoo:
            code, output = run_cli("--suite", "demo", "--only", "squeezenet1_1", "--zoo", zoo,
                                   "--image-size", "64", "--aoti", "--training")
            self.assertEqual(code, 0, output)
            with open(os.path.join(zoo, "demo", "squeezenet1_1", "manifest.json")) as f:
                doc = json.load(f)
        self.assertIn("train", doc["artifacts"])  # the TorchScript step stands
        self.assertNotIn("aoti_train.float32.cpu", doc["artifacts"])
        self.assertRegex(doc["aoti_failures"]["aoti_train.float32.cpu"],
                         r"AOTInductor packages need torch >= 2\.6")
        self.assertIn("no aoti_train.float32.cpu: AOTInductor packages need torch", output)


# Compiled and run in a process of its own: PyTorch's Python package loader has crashed on
# step packages (bench/training_package.py), and a crash must fail this test, not end the suite.
PACKAGE_CHECK = textwrap.dedent("""
    import sys, torch
    sys.path[:0] = [sys.argv[1]]
    from test_training_step import SmallConvNet, mean_loss, reference_step
    from zoo_export import training_step
    torch.manual_seed(0)
    model, x = SmallConvNet().train(), torch.randn(2, 3, 8, 8)
    def compile_package(program, path):
        torch._inductor.aoti_compile_and_package(program, package_path=path)
    entry = training_step.export_step_package(model, (x,), mean_loss, sys.argv[2], "step.pt2",
                                              False, compile_package)
    assert entry["kind"] == "aoti_training", entry
    package = torch._inductor.aoti_load_package(sys.argv[2] + "/step.pt2")
    parameters = [p.detach().clone() for p in model.parameters()]
    buffers = [b.clone() for b in model.buffers()]
    got = package(*parameters, *buffers, x)
    loss, gradients, buffers_after = reference_step(model, (x,))
    torch.testing.assert_close(got[0], loss, rtol=1e-4, atol=1e-5)
    for g, want in zip(got[1:], gradients):
        torch.testing.assert_close(g, want, rtol=1e-3, atol=1e-5)
    for b, want in zip(buffers, buffers_after):
        torch.testing.assert_close(b, want, rtol=1e-4, atol=1e-5)
    print("step package matches autograd")
""")


@unittest.skipUnless(CAN_COMPILE, aoti_export.unsupported_reason() or "")
class CompiledStepPackage(unittest.TestCase):
    def test_a_cpu_step_package_matches_autograd(self):
        here = os.path.dirname(os.path.abspath(__file__))
        with tempfile.TemporaryDirectory() as folder:
            done = subprocess.run(
                [sys.executable, "-c", PACKAGE_CHECK, here, folder], capture_output=True,
                text=True, timeout=900, cwd=REPO_ROOT,
                env={**os.environ, "PYTHONPATH": os.path.join(REPO_ROOT, "tools")})
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("step package matches autograd", done.stdout)


if __name__ == "__main__":
    unittest.main()
