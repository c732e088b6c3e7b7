"""tools/zoo_export/torchscript_export.restore_state: after an export step that may change a
module (a training-mode run, a float16 round trip for a package), the saved values come back,
in place (a traced module sharing the tensors sees them), and a buffer that cannot be written
in place (an expanded view, as torch.meshgrid returns and Super_SloMo registers) is no reason to
fail when it did not change."""

import unittest

import torch
from torch import nn

from helpers import REPO_ROOT  # noqa: F401  (puts tools/ on the path)
from zoo_export.torchscript_export import restore_state, snapshot_state


class WithGrid(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.norm = nn.BatchNorm1d(3)
        grid_x, _ = torch.meshgrid(torch.arange(3.0), torch.arange(3.0), indexing="xy")
        self.register_buffer("grid_x", grid_x)  # stride 0 along one dimension

    def forward(self, x):
        return self.norm(self.linear(x)) + self.grid_x[0]


class RestoreState(unittest.TestCase):
    def test_an_expanded_buffer_that_did_not_change_is_no_error(self):
        module = WithGrid()
        self.assertEqual(module.grid_x.stride()[0], 0)
        # what the old restore did: load_state_dict copies into every tensor, and copying into
        # the expanded buffer raises
        with self.assertRaisesRegex(RuntimeError, "single memory location"):
            with torch.no_grad():
                module.load_state_dict(snapshot_state(module))
        state = snapshot_state(module)
        restore_state(module, state)
        self.assertTrue(torch.equal(module.grid_x, state["grid_x"]))

    def test_changed_values_come_back_in_place(self):
        module = WithGrid()
        state = snapshot_state(module)
        weight = module.linear.weight
        module.train()
        module(torch.randn(4, 3))  # moves the running statistics
        with torch.no_grad():
            weight.mul_(2)
        self.assertFalse(torch.equal(module.norm.running_mean, state["norm.running_mean"]))
        restore_state(module, state)
        self.assertIs(module.linear.weight, weight)  # the same tensor, written
        for name, saved in state.items():
            self.assertTrue(torch.equal(module.state_dict()[name], saved), name)

    def test_a_key_the_module_no_longer_has_is_an_error(self):
        module = WithGrid()
        state = snapshot_state(module)
        state["gone.weight"] = torch.zeros(1)
        with self.assertRaisesRegex(RuntimeError, "no longer has gone.weight"):
            restore_state(module, state)


if __name__ == "__main__":
    unittest.main()
