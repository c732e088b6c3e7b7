"""scripts/coverage_table.py: every list name gets a row; exported or not, and why, from the
zoos' index.json; jit and aot_inductor statuses from accuracy CSVs; "not run yet" where an
input is missing."""

import csv
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

from helpers import REPO_ROOT  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import coverage_table  # noqa: E402


def write_index(folder, models):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "index.json"), "w") as f:
        json.dump({"format": "zoobench-index/1", "models": models}, f)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["dev", "name", "batch_size", "accuracy",
                                               "backend", "reason"])
        writer.writeheader()
        writer.writerows(rows)


def row_of(text, name):
    return next(line for line in text.splitlines() if line.startswith(f"| {name} |"))


class CoverageTableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def generate(self, *args):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(coverage_table.main(list(args)), 0)
        return out.getvalue()

    def test_cpu_only_says_not_run_yet_for_the_h200(self):
        write_index(self.path("cpu"), [
            {"suite": "torchbench", "name": "resnet18", "status": "exported"},
            {"suite": "torchbench", "name": "hf_Bert", "status": "failed",
             "reason": "transformers is not installed for /usr/bin/python3"}])
        text = self.generate("--cpu-zoo", self.path("cpu"))
        self.assertIn("| torchbench | 56 | 1/56 | not run yet | not run yet | not run yet |",
                      text)
        self.assertIn("| huggingface | 37 |", text)
        self.assertIn("| timm_models | 14 |", text)
        self.assertEqual(row_of(text, "resnet18"),
                         "| resnet18 | built in: torchvision:resnet18 | yes | not run yet | "
                         "not run yet | not run yet |  |")
        self.assertIn("CPU: transformers is not installed", row_of(text, "hf_Bert"))
        self.assertIn("library mapping: hf:AutoModelForMaskedLM(BertConfig())",
                      row_of(text, "hf_Bert"))
        drq = row_of(text, "drq")
        # a skip is the yaml's: known for the H200 before any run there, and said once
        self.assertIn("| drq | checkout | skipped | skipped | not run yet | not run yet | "
                      "CPU, H200: skipped, torchbench.yaml skip.all: impossible offline", drq)

    def test_h200_exports_and_accuracy_with_reasons(self):
        write_index(self.path("cpu"), [])
        write_index(self.path("gpu"), [
            {"suite": "timm_models", "name": "repvgg_a2", "status": "exported"},
            {"suite": "timm_models", "name": "ghostnet_100", "status": "exported"},
            {"suite": "timm_models", "name": "nfnet_l0", "status": "failed",
             "reason": "making eval.pt: OutOfMemoryError: CUDA out of memory"}])
        write_csv(self.path("timm_models_jit_inference_float32_cuda_accuracy.csv"), [
            {"dev": "cuda", "name": "repvgg_a2", "accuracy": "pass", "backend": "jit"},
            {"dev": "cuda:1", "name": "ghostnet_100", "accuracy": "fail_accuracy",
             "backend": "jit", "reason": "output[0] differs by 3e-2"},
            {"dev": "cpu", "name": "nfnet_l0", "accuracy": "pass", "backend": "jit"}])
        text = self.generate("--cpu-zoo", self.path("cpu"), "--gpu-zoo", self.path("gpu"),
                             "--jit", self.path("timm_models_jit_inference_float32_cuda_"
                                                "accuracy.csv"))
        self.assertIn("| timm_models | 14 | 0/14 | 2/14 | 1/14 | not run yet |", text)
        self.assertIn("| yes | pass | not run yet |", row_of(text, "repvgg_a2"))
        ghost = row_of(text, "ghostnet_100")
        self.assertIn("| fail_accuracy |", ghost)
        self.assertIn("jit: fail_accuracy (output[0] differs by 3e-2)", ghost)
        nfnet = row_of(text, "nfnet_l0")  # a CPU row does not count for the H200
        self.assertIn("H200: making eval.pt: OutOfMemoryError", nfnet)
        self.assertIn("| no | - |", nfnet)


if __name__ == "__main__":
    unittest.main()
