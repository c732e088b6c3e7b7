"""Exports small real models (torchvision squeezenet1_1, the text encoder) into a temporary zoo
and checks the manifest contract of docs/formats.md against the files and against torchvision."""

import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import types
import unittest

import torch
import torchvision

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import export_zoo  # noqa: E402
from zoo_export import exporter  # noqa: E402
from zoo_export.model_bundle import ExportableModel, make_input  # noqa: E402
from zoo_export.torchscript_export import ExportError, compare_outputs  # noqa: E402


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ExportRealModelsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.zoo = os.path.join(cls.tmp.name, "zoo")
        cls.code, cls.output = run_cli(
            "--suite", "demo", "-k", "^squeezenet1_1$", "-k", "^text_encoder_small$",
            "--batch-size", "1", "--image-size", "64", "--seq-len", "16", "--training",
            "--zoo", cls.zoo)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def manifest(self, name):
        with open(os.path.join(self.zoo, "demo", name, "manifest.json")) as f:
            return json.load(f)

    def folder(self, name):
        return os.path.join(self.zoo, "demo", name)

    def test_export_succeeds_with_one_progress_line_per_model(self):
        self.assertEqual(self.code, 0, self.output)
        self.assertRegex(self.output, r"\[1/2\] demo/squeezenet1_1: exported in [\d.]+s")
        self.assertRegex(self.output, r"\[2/2\] demo/text_encoder_small: exported in [\d.]+s")
        self.assertIn("exported 2, failed 0", self.output)

    def test_manifest_fields_and_sha256_match_the_files(self):
        for name in ("squeezenet1_1", "text_encoder_small"):
            m = self.manifest(name)
            self.assertEqual(m["format"], "zoobench-manifest/1")
            self.assertEqual((m["name"], m["suite"], m["batch_size"]), (name, "demo", 1))
            self.assertEqual(set(m["artifacts"]), {"eval", "train"})
            for role, art in m["artifacts"].items():
                self.assertEqual(art["path"], f"{role}.pt")
                self.assertEqual((art["kind"], art["traced_on"], art["method"]),
                                 ("torchscript", "cpu", "trace"))
                self.assertEqual(art["sha256"], sha256(os.path.join(self.folder(name),
                                                                    art["path"])))
            self.assertEqual(m["inputs"]["sha256"],
                             sha256(os.path.join(self.folder(name), m["inputs"]["path"])))
            self.assertEqual(m["mutated_inputs"], [])
            self.assertFalse(m["dropout"])
            self.assertEqual(m["training"], {"loss": "mean_of_floating_outputs",
                                             "loss_scale": 1.0})
            versions = m["versions"]
            self.assertEqual(versions["torch"], torch.__version__)
            self.assertIn("torchvision", versions)
            self.assertIn("transformers", versions)
        self.assertEqual(self.manifest("squeezenet1_1")["source"], "torchvision:squeezenet1_1")

    def test_inputs_load_and_match_the_spec(self):
        for name in ("squeezenet1_1", "text_encoder_small"):
            m = self.manifest(name)
            inputs = torch.load(os.path.join(self.folder(name), "inputs.pt"))
            self.assertIsInstance(inputs, tuple)
            self.assertEqual(len(inputs), len(m["inputs"]["spec"]))
            for t, spec in zip(inputs, m["inputs"]["spec"]):
                self.assertEqual(list(t.shape), spec["shape"])
                self.assertEqual(str(t.dtype), "torch." + spec["dtype"])
        ids = torch.load(os.path.join(self.folder("text_encoder_small"), "inputs.pt"))[0]
        self.assertEqual(list(ids.shape), [1, 16])
        self.assertTrue(bool((ids >= 0).all() and (ids < 4096).all()))

    def test_eval_pt_reproduces_torchvision_with_the_seeded_weights(self):
        inputs = torch.load(os.path.join(self.folder("squeezenet1_1"), "inputs.pt"))
        torch.manual_seed(1337)  # the exporter's seed, as upstream's benchmarks
        reference = torchvision.models.squeezenet1_1(weights=None).eval()
        with torch.no_grad():
            expected = reference(*inputs)
            got = torch.jit.load(os.path.join(self.folder("squeezenet1_1"), "eval.pt"))(*inputs)
        self.assertEqual(got.shape, (1, 1000))
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)

    def test_train_pt_is_train_mode_with_dropout_off(self):
        # neither model has batch norm: with dropout at 0 train mode computes what eval does
        for name in ("squeezenet1_1", "text_encoder_small"):
            inputs = torch.load(os.path.join(self.folder(name), "inputs.pt"))
            train = torch.jit.load(os.path.join(self.folder(name), "train.pt"))
            evaluate = torch.jit.load(os.path.join(self.folder(name), "eval.pt"))
            self.assertTrue(train.training)
            self.assertFalse(evaluate.training)
            torch.manual_seed(0)
            a = train(*inputs)
            torch.manual_seed(1)
            b = train(*inputs)
            torch.testing.assert_close(a, b, rtol=0, atol=0)
            with torch.no_grad():
                torch.testing.assert_close(a.detach(), evaluate(*inputs), rtol=1e-5, atol=1e-5)
            a.float().mean().backward()  # the training graph is differentiable

    def test_index_lists_both(self):
        with open(os.path.join(self.zoo, "index.json")) as f:
            index = json.load(f)
        status = {(m["suite"], m["name"]): m["status"] for m in index["models"]}
        self.assertEqual(status, {("demo", "squeezenet1_1"): "exported",
                                  ("demo", "text_encoder_small"): "exported"})

    def test_index_says_where_each_export_spent_its_time(self):
        with open(os.path.join(self.zoo, "index.json")) as f:
            index = json.load(f)
        for model in index["models"]:
            stages = model["stage_s"]
            self.assertEqual(list(stages)[:4], ["building the model", "making eval.pt",
                                                "making train.pt", "saving inputs.pt"], model["name"])
            self.assertTrue(all(seconds >= 0 for seconds in stages.values()), stages)
            # The stages are the export's whole duration, not more (the index rounds to 1 ms).
            self.assertLessEqual(sum(stages.values()), model["duration_s"] + 0.01, model["name"])
            self.assertGreater(sum(stages.values()), 0.5 * model["duration_s"], model["name"])
        self.assertRegex(self.output, r"took: building the model [\d.]+s, making eval.pt [\d.]+s")


class Accumulate(torch.nn.Module):
    """Writes into its second input, like an optimizer state update."""

    def forward(self, x, acc):
        acc.add_(x)
        return acc * 2


class MutatedInputsTest(unittest.TestCase):
    def test_inputs_the_model_writes_into_are_recorded(self):
        def build(name, ctx):
            x, sx = make_input("x", [3], "randn")
            acc, sa = make_input("acc", [3], "zeros")
            return ExportableModel(module=Accumulate(), inputs=(x, acc), input_specs=[sx, sa],
                                   source="test:accumulate", batch_size=1)

        source = types.SimpleNamespace(label=lambda n: "test:" + n, build=build,
                                       unavailable_reason=lambda: None)
        planned = exporter.PlannedModel(suite="custom", name="accumulate", source=source,
                                        source_name="accumulate", batch_size=1)
        with tempfile.TemporaryDirectory() as zoo:
            outcome = exporter.export_one(planned, exporter.ExportOptions(zoo=zoo),
                                          {"exporter": "test"})
            self.assertEqual(outcome.status, "exported", outcome.reason)
            with open(os.path.join(zoo, "custom", "accumulate", "manifest.json")) as f:
                m = json.load(f)
            self.assertEqual(m["mutated_inputs"], [1])
            saved = torch.load(os.path.join(zoo, "custom", "accumulate", "inputs.pt"))
            self.assertTrue(bool((saved[1] == 0).all()), "inputs are saved as they were traced")


class DropoutOfTheExport(unittest.TestCase):
    """What is traced has dropout 0 (unless the model keeps it); a recipe alone keeps the
    model's dropout as built, for the process that runs it to set by mode."""

    @staticmethod
    def bundle(keep_dropout=False):
        module = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.3))
        return ExportableModel(module=module, inputs=(torch.randn(2, 4),), input_specs=[],
                               source="test:dropout", batch_size=2, keep_dropout=keep_dropout)

    def dropout_after_prepare(self, keep_dropout=False, **options):
        bundle = self.bundle(keep_dropout)
        exporter._prepare(bundle, exporter.ExportOptions(device="cpu", **options))
        return bundle.module[1].p

    def test_traced_or_compiled_exports_have_dropout_0(self):
        self.assertEqual(self.dropout_after_prepare(torchscript=True), 0.0)
        self.assertEqual(self.dropout_after_prepare(torchscript=False, aoti=True), 0.0)
        self.assertEqual(self.dropout_after_prepare(keep_dropout=True, torchscript=True), 0.3)

    def test_a_recipe_alone_keeps_the_models_dropout(self):
        self.assertEqual(self.dropout_after_prepare(torchscript=False), 0.3)


class CompareOutputsTest(unittest.TestCase):
    """The check that a saved artifact reproduces the model before it enters the zoo."""

    def test_nested_outputs_within_tolerance_pass(self):
        ref = [{"boxes": torch.ones(2, 4), "labels": torch.tensor([1, 2])}, torch.zeros(0)]
        got = [{"boxes": torch.ones(2, 4) + 1e-6, "labels": torch.tensor([1, 2])}, torch.zeros(0)]
        check = compare_outputs(ref, got, "eval.pt")
        self.assertEqual(check.outputs, 3)
        self.assertAlmostEqual(check.max_abs_diff, 1e-6, delta=1e-7)

    def test_differences_are_reported(self):
        cases = [
            ((torch.ones(3),), (torch.ones(3) * 1.01,), "differs from the model's by up to"),
            ((torch.ones(3),), (torch.ones(3), torch.ones(1)), "returns 2 tensors, the model 1"),
            ((torch.ones(3),), (torch.ones(4),), "is torch.float32[4]"),
            ((torch.tensor([1, 2]),), (torch.tensor([1, 3]),), "differs from the model's"),
            ((torch.ones(2),), (torch.tensor([1.0, float("nan")]),), "non-finite"),
        ]
        for ref, got, message in cases:
            with self.assertRaises(ExportError) as ctx:
                compare_outputs(ref, got, "eval.pt")
            self.assertIn(message, str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
