"""Where a TorchScript model reads device values back to the host, and whether it captures.

For each exported model folder given: every tensor-to-number conversion (aten::Int, aten::Float,
aten::ScalarImplicit, aten::item, ...) in the forward graph of each submodule, with the chain of
nodes that produced its input (so a size computed on the host can be told from a device value);
then a CUDA-graph capture attempt of the module as zoobench's jit backend prepares it (frozen,
optimize_for_inference, three warm-up calls), with the error's first lines when it fails.
Diagnosis for issue 18 (capture fallbacks); runs on the GPU machine:
  python3 scripts/host_sync_sites.py ZOO/timm_models/tf_efficientnet_b0 ...
When capture fails, one more call with CUDA's sync debug mode set to error names the first
operation that waits for the device, with TorchScript's traceback.
"""
import json
import os
import sys
import traceback

import torch

CONVERSIONS = {"aten::Int", "aten::Float", "aten::Bool", "aten::ScalarImplicit", "aten::item",
               "aten::IntImplicit", "aten::FloatImplicit", "aten::_local_scalar_dense"}


def chain(value, depth):
    node = value.node()
    text = node.kind()
    if node.kind() == "prim::Param":
        return f"graph input {value.debugName()}: {value.type()}"
    if node.kind() == "prim::GetAttr":
        return f"prim::GetAttr[{node.s('name')}]"
    if depth == 0:
        return text + "(...)"
    args = [chain(i, depth - 1) for i in node.inputs() if isinstance(i.type(), torch._C.TensorType)]
    return f"{text}({', '.join(args)})"


def sites(module):
    found = []
    for name, sub in module.named_modules():
        try:
            graph = sub.graph
        except (AttributeError, RuntimeError):
            continue
        for node in graph.findAllNodes("aten::Int") + [n for k in CONVERSIONS - {"aten::Int"} for n in graph.findAllNodes(k)]:
            inputs = list(node.inputs())
            if len(inputs) != 1 or not isinstance(inputs[0].type(), torch._C.TensorType):
                continue
            found.append((name or "<root>", sub.original_name, node.kind(), chain(inputs[0], 4)))
    return found


def capture(module, inputs):
    for _ in range(3):
        module(*inputs)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            module(*inputs)
        return "captured"
    except Exception as e:  # noqa: BLE001 - the diagnosis reports any failure
        lines = traceback.format_exception_only(type(e), e)
        return "capture failed: " + " ".join(l.strip() for l in lines)[:300] + "\n" + first_sync(module, inputs)


def first_sync(module, inputs):
    """Runs once with CUDA's sync debug mode set to error: the first operation that waits for
    the device raises, and TorchScript's traceback names it with its source line."""
    torch.cuda.set_sync_debug_mode("error")
    try:
        module(*inputs)
        return "    no synchronizing call outside capture"
    except Exception as e:  # noqa: BLE001
        return "    first synchronizing call:\n      " + "\n      ".join(str(e).splitlines()[:60])
    finally:
        torch.cuda.set_sync_debug_mode("default")


def main():
    for folder in sys.argv[1:]:
        manifest = json.load(open(os.path.join(folder, "manifest.json")))
        print(f"== {manifest['name']} ({folder})")
        module = torch.jit.load(os.path.join(folder, "eval.pt"), map_location="cuda").eval()
        inputs = [t.cuda() for t in torch.load(os.path.join(folder, "inputs.pt"))]
        seen = set()
        for where, cls, kind, producer in sites(module):
            key = (cls, kind, producer)
            if key in seen:
                continue
            seen.add(key)
            print(f"  {kind} in {where} ({cls}): {producer[:600]}")
        with torch.no_grad():
            print("  unfrozen:", capture(module, inputs))
            try:
                frozen = torch.jit.optimize_for_inference(torch.jit.freeze(module))
                print("  frozen + optimize_for_inference:", capture(frozen, inputs))
            except Exception as e:  # noqa: BLE001
                print("  freeze failed:", str(e).splitlines()[0])


if __name__ == "__main__":
    main()
