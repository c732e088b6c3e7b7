"""TorchBench's basic_gnn_* models, built offline: torch_geometric's basic GNNs as the
checkout's torchbenchmark/util/framework/gnn/model_factory.py (BasicGNNModel) builds them:
Model(64, 64, num_layers=3), x [10000, 64] and edge_index [2, 200000] of random node ids.

The checkout also calls torch_geometric.compile(model) and torch_geometric.compile's
to_jittable (both gone from newer torch_geometric): global side effects and a scripting aid,
neither of which changes what the model computes; the exporter traces it as it is.
"""

from __future__ import annotations

import sys
from typing import Dict, Optional

from ..model_bundle import ExportableModel, SourceUnavailable, make_input

MODELS: Dict[str, str] = {
    "basic_gnn_edgecnn": "EdgeCNN",
    "basic_gnn_gcn": "GCN",
    "basic_gnn_sage": "GraphSAGE",
}
NODES, EDGES, CHANNELS, LAYERS = 10_000, 200_000, 64, 3


def provides(name: str) -> bool:
    return name in MODELS


def label(name: str) -> str:
    return f"torch_geometric:{MODELS[name]}({CHANNELS}, {CHANNELS}, num_layers={LAYERS})"


def default_batch_size(name: str, training: bool = False) -> int:
    return 1  # BasicGNNModel: ALLOW_CUSTOMIZE_BSIZE = False, batch 1 (the graph is the input)


def unavailable_reason() -> Optional[str]:
    try:
        import torch_geometric  # noqa: F401
    except ImportError:
        return f"torch_geometric is not installed for {sys.executable}"
    return None


def build(name: str, ctx) -> ExportableModel:
    reason = unavailable_reason()
    if reason:
        raise SourceUnavailable(reason)
    import torch_geometric.nn as pyg_nn

    model_cls = getattr(pyg_nn, MODELS[name], None)
    if model_cls is None:
        raise SourceUnavailable(f"torch_geometric.nn has no {MODELS[name]}")
    model = model_cls(CHANNELS, CHANNELS, num_layers=LAYERS)
    x, x_spec = make_input("x", [NODES, CHANNELS], "randn")
    edges, edge_spec = make_input("edge_index", [2, EDGES], f"randint:0:{NODES}",
                                  note="random graph: source and target node ids")
    return ExportableModel(module=model, inputs=(x, edges), input_specs=[x_spec, edge_spec],
                           source=label(name), batch_size=1,
                           details={"nodes": NODES, "edges": EDGES, "torchbench_model": name})
