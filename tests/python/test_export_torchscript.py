"""--from-torchscript FILE --inputs FILE --name NAME: a user's scripted model enters the zoo as
it is (this is how tests elsewhere build faulty models)."""

import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import unittest

import torch

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import export_zoo  # noqa: E402


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class WrongInTraining(torch.nn.Module):
    """A deliberately faulty model: in training mode it returns NaN where x < 0."""

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        y = x * scale
        if self.training:
            y = torch.where(x < 0, torch.full_like(y, float("nan")), y)
        return y


class FromTorchScriptTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.script = os.path.join(self.tmp.name, "faulty.pt")
        self.inputs = os.path.join(self.tmp.name, "faulty_inputs.pt")
        self.zoo = os.path.join(self.tmp.name, "zoo")
        torch.jit.save(torch.jit.script(WrongInTraining()), self.script)
        torch.save((torch.randn(3, 5), torch.tensor(2.0)), self.inputs)

    def tearDown(self):
        self.tmp.cleanup()

    def test_file_is_taken_as_is_with_its_inputs(self):
        code, out = run_cli("--from-torchscript", self.script, "--inputs", self.inputs,
                            "--name", "faulty", "--training", "--mutated-inputs", "1",
                            "--zoo", self.zoo)
        self.assertEqual(code, 0, out)
        folder = os.path.join(self.zoo, "custom", "faulty")
        with open(os.path.join(folder, "manifest.json")) as f:
            m = json.load(f)
        self.assertEqual((m["name"], m["suite"], m["source"], m["batch_size"]),
                         ("faulty", "custom", "torchscript:faulty.pt", 3))
        for role in ("eval", "train"):
            self.assertEqual(m["artifacts"][role]["sha256"],
                             sha256(os.path.join(folder, f"{role}.pt")))
            self.assertEqual(m["artifacts"][role]["method"], "user")
        self.assertEqual(m["mutated_inputs"], [1])
        self.assertEqual([(s["name"], s["dtype"], s["shape"], s["init"])
                          for s in m["inputs"]["spec"]],
                         [("input_0", "float32", [3, 5], "saved"),
                          ("input_1", "float32", [], "saved")])
        inputs = torch.load(os.path.join(folder, "inputs.pt"))
        expected = torch.load(self.inputs)
        for a, b in zip(inputs, expected):
            self.assertTrue(torch.equal(a, b))
        # the fault survives: eval is right, train.pt (training mode) gives NaN
        evaluate = torch.jit.load(os.path.join(folder, "eval.pt"))
        train = torch.jit.load(os.path.join(folder, "train.pt"))
        self.assertTrue(train.training)
        self.assertFalse(evaluate.training)
        torch.testing.assert_close(evaluate(*inputs), inputs[0] * 2.0)
        self.assertEqual(bool(torch.isnan(train(*inputs)).any()), bool((inputs[0] < 0).any()))
        with open(os.path.join(self.zoo, "index.json")) as f:
            index = json.load(f)
        self.assertEqual([(e["suite"], e["name"], e["status"]) for e in index["models"]],
                         [("custom", "faulty", "exported")])

    def test_suite_can_be_named(self):
        code, out = run_cli("--from-torchscript", self.script, "--inputs", self.inputs,
                            "--name", "faulty", "--suite", "demo", "--zoo", self.zoo)
        self.assertEqual(code, 0, out)
        self.assertTrue(os.path.isfile(os.path.join(self.zoo, "demo", "faulty", "eval.pt")))

    def test_unreadable_files_are_failures_with_reasons(self):
        not_script = os.path.join(self.tmp.name, "not_script.pt")
        with open(not_script, "wb") as f:
            f.write(b"not a zip archive")
        code, out = run_cli("--from-torchscript", not_script, "--inputs", self.inputs,
                            "--name", "broken", "--zoo", self.zoo)
        self.assertEqual(code, 1)
        self.assertIn("is not a TorchScript file torch.jit.load can read", out)
        not_tuple = os.path.join(self.tmp.name, "dict_inputs.pt")
        torch.save({"x": torch.ones(1)}, not_tuple)
        code, out = run_cli("--from-torchscript", self.script, "--inputs", not_tuple,
                            "--name", "broken", "--zoo", self.zoo)
        self.assertEqual(code, 1)
        self.assertIn("must hold a tuple of tensors", out)
        with open(os.path.join(self.zoo, "index.json")) as f:
            index = json.load(f)
        self.assertEqual([e["status"] for e in index["models"]], ["failed"])

    def test_missing_companion_flags_are_usage_errors(self):
        with self.assertRaises(SystemExit) as ctx, contextlib.redirect_stderr(io.StringIO()):
            export_zoo.parse_args(["--from-torchscript", self.script, "--name", "x"])
        self.assertEqual(ctx.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
