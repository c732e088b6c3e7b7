"""A user's own TorchScript file plus a torch.save'd tuple of inputs (--from-torchscript FILE
--inputs FILE --name NAME). The module is saved as it is, in eval mode as eval.pt and in train
mode as train.pt, and never run here: tests use this to put deliberately faulty models into a
zoo."""

from __future__ import annotations

import os
from typing import List, Optional

import torch

from ..model_bundle import ExportableModel, SourceUnavailable, spec_of_saved


def label(path: str) -> str:
    return f"torchscript:{os.path.basename(path)}"


def build(path: str, inputs_path: str, batch_size: Optional[int] = None,
          mutated_inputs: Optional[List[int]] = None) -> ExportableModel:
    if not os.path.isfile(path):
        raise SourceUnavailable(f"--from-torchscript: no such file {path}")
    if not os.path.isfile(inputs_path):
        raise SourceUnavailable(f"--inputs: no such file {inputs_path}")
    try:
        script = torch.jit.load(path, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any load error is the user's file's fault
        raise SourceUnavailable(f"{path} is not a TorchScript file torch.jit.load can read: "
                                f"{str(e).strip().splitlines()[0] if str(e).strip() else e!r}")
    try:
        inputs = torch.load(inputs_path, map_location="cpu")
    except Exception as e:  # noqa: BLE001
        raise SourceUnavailable(f"{inputs_path} is not a file torch.load can read: {e}")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)) or not all(isinstance(t, torch.Tensor)
                                                         for t in inputs):
        raise SourceUnavailable(f"{inputs_path} must hold a tuple of tensors (forward's "
                                f"positional arguments), got {type(inputs).__name__}")
    inputs = tuple(inputs)
    if batch_size is None:
        batch_size = int(inputs[0].shape[0]) if inputs and inputs[0].dim() > 0 else 1
    specs = [spec_of_saved(f"input_{i}", t) for i, t in enumerate(inputs)]
    for i in mutated_inputs or []:
        if not 0 <= i < len(inputs):
            raise SourceUnavailable(f"--mutated-inputs {i}: there are only {len(inputs)} inputs")
    return ExportableModel(
        module=script, inputs=inputs, input_specs=specs, source=label(path),
        batch_size=batch_size, method="user", prebuilt_script=script,
        details={"user_file": os.path.abspath(path), "mutated_inputs": list(mutated_inputs or [])})
