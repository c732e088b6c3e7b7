"""Real TorchBench checkout models end to end on the CPU: exported from ../shared/torchbench
(pytorch/benchmark, the checkout every developer and CI has), run by `zoobench run --accuracy
--backend jit`, and the process state (seed function, default device, ...) is the same after
the checkout models as before them.

Three small models, chosen to stay within CI's time: lennard_jones (torch.func through
functorch on torch < 2.0), phlippe_resnet, dcgan (TorchBench's batch sizes; a few seconds
each on two cores), and functorch_maml_omniglot, built from the checkout's code with synthetic
inputs. Skipped, saying so, where the checkout or the zoobench binary is absent.
"""

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

from helpers import REPO_ROOT  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import export_zoo  # noqa: E402
from zoo_export import process_state  # noqa: E402

CHECKOUT = os.path.join(REPO_ROOT, "..", "shared", "torchbench")
BINARY = os.path.join(os.environ.get("ZOOBENCH_BINARY_DIR", os.path.join(REPO_ROOT, "build")),
                      "zoobench")
MODELS = ("lennard_jones", "phlippe_resnet", "dcgan", "functorch_maml_omniglot")


@unittest.skipUnless(os.path.isdir(os.path.join(CHECKOUT, "torchbenchmark")),
                     f"no TorchBench checkout at {CHECKOUT} (../shared/torchbench)")
class CheckoutModelsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.zoo = os.path.join(cls.tmp.name, "zoo")
        cls.before = process_state.snapshot()
        cls.seed_functions = [torch.manual_seed]  # a list: a class attribute would bind it
        pattern = "^(" + "|".join(MODELS) + ")$"
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            cls.code = export_zoo.main(["--suite", "torchbench", "--torchbench-dir", CHECKOUT,
                                        "--zoo", cls.zoo, "-k", pattern])
        cls.output = out.getvalue()
        cls.after = process_state.snapshot()
        cls.seed_functions.append(torch.manual_seed)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def manifest(self, name):
        with open(os.path.join(self.zoo, "torchbench", name, "manifest.json")) as f:
            return json.load(f)

    def test_every_model_exports_from_the_checkout(self):
        self.assertEqual(self.code, 0, self.output)
        self.assertIn(f"exported {len(MODELS)}, failed 0", self.output)
        self.assertEqual(self.manifest("dcgan")["source"], "torchbench:dcgan")
        self.assertEqual(self.manifest("functorch_maml_omniglot")["source"],
                         "torchbench-synthetic:functorch_maml_omniglot")
        # TorchBench's own batch size (DEFAULT_EVAL_BSIZE), not a default of ours
        self.assertEqual(self.manifest("lennard_jones")["batch_size"], 1000)

    def test_process_state_is_as_before(self):
        self.assertIs(self.seed_functions[1], self.seed_functions[0],
                      "torch.manual_seed is still TorchBench's replacement")
        self.assertEqual(self.after["default device"], self.before["default device"])
        self.assertEqual(self.after, self.before)

    @unittest.skipUnless(os.access(BINARY, os.X_OK), f"no zoobench binary at {BINARY}")
    def test_zoobench_runs_them_with_jit_and_they_pass(self):
        self.assertEqual(self.code, 0, self.output)
        results = os.path.join(self.tmp.name, "results")
        run = subprocess.run(
            [BINARY, "run", "--zoo", self.zoo, "--suite", "torchbench", "--accuracy", "--no-export",
             "--backend", "jit", "--devices", "cpu", "--timeout", "300",
             "--output-directory", results],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        path = os.path.join(results, "torchbench_jit_inference_float32_cpu_accuracy.csv")
        self.assertTrue(os.path.isfile(path), run.stdout[-3000:])
        with open(path, newline="") as f:
            rows = {row["name"]: row for row in csv.DictReader(f)}
        self.assertEqual(set(rows), set(MODELS), run.stdout[-3000:])
        for name, row in rows.items():
            self.assertEqual(row["accuracy"], "pass", f"{name}: {row.get('reason')}")


if __name__ == "__main__":
    unittest.main()
