"""scripts/merge_zoos.py: zoos exported in parallel become one zoo. A model exported by several
parts keeps the union of its artifacts (train.pt from one part, AOTInductor packages from
another) only when the parts traced it with the same inputs; the index keeps exported entries
over failed ones. The parts here are written by the real exporter (--from-torchscript)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

from helpers import REPO_ROOT  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

EXPORT = os.path.join(REPO_ROOT, "tools", "export_zoo.py")
MERGE = os.path.join(REPO_ROOT, "scripts", "merge_zoos.py")


class Doubler(torch.nn.Module):
    def forward(self, x):
        return x * 2


def export(zoo, model_file, inputs_file, name):
    subprocess.run([sys.executable, EXPORT, "--zoo", zoo, "--from-torchscript", model_file,
                    "--inputs", inputs_file, "--name", name], check=True, capture_output=True)


def manifest(zoo, suite, name):
    with open(os.path.join(zoo, suite, name, "manifest.json")) as f:
        return json.load(f)


class MergeZoos(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.model = os.path.join(self.root, "doubler.pt")
        torch.jit.save(torch.jit.script(Doubler()), self.model)
        self.inputs = os.path.join(self.root, "inputs.pt")
        torch.save((torch.ones(2, 3),), self.inputs)
        self.other_inputs = os.path.join(self.root, "other_inputs.pt")
        torch.save((torch.zeros(2, 3),), self.other_inputs)

    def tearDown(self):
        self.tmp.cleanup()

    def merge(self, target, *parts):
        return subprocess.run([sys.executable, MERGE, target, *parts], check=True,
                              capture_output=True, text=True).stdout

    def add_fake_artifact(self, zoo, suite, name, role):
        """What another part adds for the same model (a package file and its manifest entry)."""
        folder = os.path.join(zoo, suite, name)
        with open(os.path.join(folder, role + ".bin"), "wb") as f:
            f.write(role.encode())
        m = manifest(zoo, suite, name)
        m["artifacts"][role] = {"path": role + ".bin", "sha256": "x", "kind": "aoti_package"}
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            json.dump(m, f)

    def test_same_inputs_union_of_artifacts(self):
        a, b, target = (os.path.join(self.root, n) for n in ("a", "b", "merged"))
        export(a, self.model, self.inputs, "doubler")
        export(b, self.model, self.inputs, "doubler")
        export(b, self.model, self.inputs, "only_in_b")
        suite = "custom"  # --from-torchscript's suite
        self.assertNotIn("train", manifest(a, suite, "doubler")["artifacts"])
        self.add_fake_artifact(b, suite, "doubler", "aoti.cuda.float32")
        self.add_fake_artifact(b, suite, "doubler", "train")
        out = self.merge(target, a, b)
        merged = manifest(target, suite, "doubler")
        self.assertIn("aoti.cuda.float32", merged["artifacts"])
        self.assertIn("train", merged["artifacts"])
        self.assertIn("eval", merged["artifacts"])
        self.assertTrue(os.path.exists(os.path.join(target, suite, "doubler", "aoti.cuda.float32.bin")))
        self.assertTrue(os.path.exists(os.path.join(target, suite, "only_in_b", "manifest.json")))
        self.assertIn("2 exported", out)
        with open(os.path.join(target, "index.json")) as f:
            names = sorted(e["name"] for e in json.load(f)["models"])
        self.assertEqual(names, ["doubler", "only_in_b"])

    def test_files_are_shared_not_copied(self):
        """A merged zoo of large models must not need their size twice (it filled the GPU
        machine's disk): its files are the parts' files, and rewriting the merged manifest
        leaves the part's alone."""
        a, b, target = (os.path.join(self.root, n) for n in ("a", "b", "merged"))
        export(a, self.model, self.inputs, "doubler")
        export(b, self.model, self.inputs, "doubler")
        suite = "custom"  # --from-torchscript's suite
        self.add_fake_artifact(b, suite, "doubler", "aoti.cuda.float32")
        part_manifest = os.path.join(a, suite, "doubler", "manifest.json")
        with open(part_manifest) as f:
            before = f.read()
        self.merge(target, a, b)
        for part, name in ((a, "eval.pt"), (b, "aoti.cuda.float32.bin")):
            merged_file = os.path.join(target, suite, "doubler", name)
            self.assertTrue(os.path.samefile(merged_file, os.path.join(part, suite, "doubler", name)), name)
        self.assertIn("aoti.cuda.float32", manifest(target, suite, "doubler")["artifacts"])
        with open(part_manifest) as f:
            self.assertEqual(f.read(), before)

    def test_different_inputs_are_not_merged(self):
        a, b, target = (os.path.join(self.root, n) for n in ("a", "b", "merged"))
        export(a, self.model, self.inputs, "doubler")
        export(b, self.model, self.other_inputs, "doubler")
        suite = "custom"  # --from-torchscript's suite
        self.add_fake_artifact(b, suite, "doubler", "aoti.cuda.float32")
        out = self.merge(target, a, b)
        self.assertIn("inputs differ", out)
        self.assertNotIn("aoti.cuda.float32", manifest(target, suite, "doubler")["artifacts"])


if __name__ == "__main__":
    unittest.main()
