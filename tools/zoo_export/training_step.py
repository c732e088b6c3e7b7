"""The whole training step as one graph, and that graph as an AOTInductor package
(aoti_train.<dtype>.<device>.pt2, written with --aoti --training; torch >= 2.6 compiles it).

The step: the forward, the model's training loss (the manifest's `loss` rule and `loss_scale`)
and the backward, traced together into one ATen graph (make_fx through torch.autograd.grad: no
autograd left in it). Its inputs are the parameters, the buffers and the model's inputs, in the
order the manifest entry's `step` contract names them; its outputs are the loss and one
gradient per parameter. Buffers the forward writes (batch norm's running statistics) are
written in place, as the model's own forward does. The optimizer is not in the package: the
harness owns the parameters and applies its update, so its training check reads gradients,
parameters after the step and buffers as for every other backend."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Sequence, Tuple

import torch
from torch import nn


def _functional_call(module: nn.Module, tensors: Dict[str, torch.Tensor], args: tuple):
    try:
        from torch.func import functional_call
    except ImportError:  # torch 1.13
        from torch.nn.utils.stateless import functional_call
    return functional_call(module, tensors, args)


def names_per_parameter(model: nn.Module) -> List[List[str]]:
    """Every name of each of model.parameters() (a tied weight has one per module holding it):
    a functional call must replace the tensor under all of them, or the gradient that flows
    through the names left out is lost (torch 1.13's functional_call does not tie weights)."""
    names: Dict[int, List[str]] = {id(p): [] for p in model.parameters()}
    for module_name, module in model.named_modules():
        for name, p in module._parameters.items():
            if p is not None:
                names[id(p)].append(f"{module_name}.{name}" if module_name else name)
    return [names[id(p)] for p in model.parameters()]


def step_graph(model: nn.Module, inputs: Sequence[torch.Tensor],
               loss: Callable[[Any], torch.Tensor]) -> Tuple[torch.fx.GraphModule, List[List[str]],
                                                             List[str]]:
    """(graph, names of each parameter, buffer names): the graph takes (parameters, buffers,
    inputs) as three lists and returns [loss, gradient per parameter]. A tied parameter is one
    parameter (model.parameters() lists it once). Traced with fake tensors: nothing runs, so
    the model's buffers are left as they were."""
    from torch.fx.experimental.proxy_tensor import make_fx
    parameter_names = names_per_parameter(model)
    buffer_names = [n for n, _ in model.named_buffers()]

    def step(parameters, buffers, args):
        leaves = [p.detach().requires_grad_() for p in parameters]
        with torch.enable_grad():
            tensors = {name: leaf for names, leaf in zip(parameter_names, leaves) for name in names}
            tensors.update(zip(buffer_names, buffers))
            value = loss(_functional_call(model, tensors, tuple(args)))
            gradients = torch.autograd.grad(value, leaves)
        return [value.detach(), *gradients]

    parameters = [p.detach() for p in model.parameters()]
    buffers = list(model.buffers())
    graph = make_fx(step, tracing_mode="fake")(parameters, buffers, list(inputs))
    return graph, parameter_names, buffer_names


class FlatStep(nn.Module):
    """The step graph with flat tensor arguments (parameters, buffers, inputs), for
    torch.export."""

    def __init__(self, graph: torch.fx.GraphModule, parameters: int, buffers: int):
        super().__init__()
        self.graph_module, self.parameters_count, self.buffers_count = graph, parameters, buffers

    def forward(self, *flat):
        p, b = self.parameters_count, self.buffers_count
        return self.graph_module(list(flat[:p]), list(flat[p:p + b]), list(flat[p + b:]))


def step_contract(parameter_names: List[List[str]], buffer_names: List[str], inputs: int,
                  dropout: bool) -> Dict[str, Any]:
    """The manifest entry's `step`: what the package takes and gives, in order. A parameter is
    named by its first name (train.pt's named_parameters name it so)."""
    return {"parameters": [names[0] for names in parameter_names],
            "buffers": buffer_names,
            "inputs": inputs,
            "outputs": ["loss"] + [f"grad:{names[0]}" for names in parameter_names],
            "buffers_written_in_place": True,
            "dropout": dropout,
            "update": "the harness's optimizer (not in the package)"}


def export_step_package(model: nn.Module, inputs: Sequence[torch.Tensor],
                        loss: Callable[[Any], torch.Tensor], folder: str, filename: str,
                        dropout: bool, compile_package: Callable[[Any, str], None]
                        ) -> Dict[str, Any]:
    """Traces the step, exports it and has `compile_package(program, path)` compile it to
    FOLDER/FILENAME; returns the manifest fields of the artifact (without path and sha256).
    The model's buffers are as they were before (nothing here runs the model)."""
    graph, parameter_names, buffer_names = step_graph(model, inputs, loss)
    parameters = [p.detach() for p in model.parameters()]
    buffers = [b.clone() for b in model.buffers()]  # torch.export may run the step on them
    program = torch.export.export(FlatStep(graph, len(parameters), len(buffers)),
                                  (*parameters, *buffers, *inputs), strict=False)
    compile_package(program, os.path.join(folder, filename))
    return {"kind": "aoti_training",
            "step": step_contract(parameter_names, buffer_names, len(inputs), dropout)}
