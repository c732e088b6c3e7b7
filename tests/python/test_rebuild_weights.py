"""The torch.compile backends' rebuilt module takes eval.pt's weights by name
(tools/zoo_compile/rebuild.py): a buffer whose elements share memory (an expanded grid, as
Super_SloMo's) cannot be written into, and is accepted when it already holds eval.pt's values."""

import hashlib
import os
import tempfile
import unittest

import torch
from torch import nn

from helpers import REPO_ROOT  # noqa: F401  (puts tools/ on the path)
from zoo_compile.rebuild import RebuildError, RebuiltModel, load_exported_weights


class ExpandedGrid(nn.Module):
    def __init__(self, row=None):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        row = torch.arange(4.0) if row is None else row
        self.register_buffer("grid", row.expand(3, 4))  # 3 rows, one row's memory

    def forward(self, x):
        return self.linear(x) + self.grid


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def rebuilt(module, folder):
    digest = sha256_of(os.path.join(folder, "eval.pt"))
    return RebuiltModel(module=module, train_module=module, folder=folder,
                        manifest={"name": "grid",
                                  "artifacts": {"eval": {"path": "eval.pt", "sha256": digest}}})


class ExportedWeights(unittest.TestCase):
    def export(self, folder):
        torch.manual_seed(0)
        exported = ExpandedGrid().eval()
        torch.jit.trace(exported, torch.randn(3, 4)).save(os.path.join(folder, "eval.pt"))
        return exported

    def test_an_expanded_buffer_with_the_same_values_is_kept_and_the_weights_are_copied(self):
        with tempfile.TemporaryDirectory() as folder:
            exported = self.export(folder)
            torch.manual_seed(1)  # other weights than the export's
            module = ExpandedGrid().eval()
            self.assertFalse(torch.equal(module.linear.weight, exported.linear.weight))
            load_exported_weights(rebuilt(module, folder), "cpu")
            self.assertTrue(torch.equal(module.linear.weight, exported.linear.weight))
            x = torch.randn(3, 4)
            self.assertTrue(torch.equal(module(x), exported(x)))

    def test_an_expanded_buffer_that_differs_is_refused_with_what_to_do(self):
        with tempfile.TemporaryDirectory() as folder:
            self.export(folder)
            module = ExpandedGrid(row=torch.ones(4)).eval()
            with self.assertRaisesRegex(RebuildError, "grid cannot be written.*re-export"):
                load_exported_weights(rebuilt(module, folder), "cpu")

    def test_the_weights_come_from_the_bytes_whose_sha256_was_checked(self):
        with tempfile.TemporaryDirectory() as folder:
            exported = self.export(folder)
            model = rebuilt(ExpandedGrid().eval(), folder)  # the digest of this export
            # Another module in eval.pt's place after the manifest was written (a re-export):
            # refused by its digest, not loaded under this model's name.
            torch.manual_seed(2)
            torch.jit.trace(ExpandedGrid().eval(), torch.randn(3, 4)).save(
                os.path.join(folder, "eval.pt"))
            with self.assertRaisesRegex(RebuildError, "changed after export"):
                load_exported_weights(model, "cpu")
            # The bytes handed to torch are those that were hashed.
            with open(os.path.join(folder, "eval.pt"), "rb") as f:
                now = f.read()
            entry = {"path": "eval.pt", "sha256": hashlib.sha256(now).hexdigest()}
            self.assertEqual(model.verified_bytes(entry, "eval.pt").getvalue(), now)
            del exported


if __name__ == "__main__":
    unittest.main()
