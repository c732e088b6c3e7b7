"""Which node of a frozen TorchScript graph first computes a different value than the same node
of the unfrozen graph. Written for the Longformer freeze fault (docs/results.md, HuggingFace list; issue 19:
`torch.jit.freeze` alone changes LongformerSelfAttention's output far beyond rounding), for the
bug report upstream; it works on any zoo repro folder (eval.pt + inputs.pt).

    /usr/bin/python3 tools/zoo_diag/frozen_graph_diff.py --model DIR/eval.pt \
        --inputs DIR/inputs.pt [--device cpu|cuda] [--tol 1e-4] [--json OUT.json]

Both graphs of `forward`, the inlined unfrozen one and the one `torch.jit.freeze(module,
optimize_numerics=False)` makes, run in TorchScript's own executor with an `aten::clone` after
every node, so each node's value is the one it had when produced: a tensor that a later slice
assignment (aten::copy_) or in-place op writes into is seen as it was before that write, and the
in-place node is seen after it. Nodes pair by kind, traced Python call stack and module path;
the report names the first paired node, in the frozen graph's order, whose value differs by more
than --tol (any difference for integers and bools) while its paired inputs agree. Exit status: 0
when it ran, whatever it found; 2 on a usage error.

Not compared: values inside prim::If/prim::Loop blocks (traced graphs have none), and tensors of
aten::empty-like ops and their views (uninitialized memory). Every snapshot of both graphs stays
on the device until the end: memory is about the sum of all intermediate values, twice. Run on
torch 1.13 (Debian); the torch._C calls used are the same in torch 2.x's source (read, not run).
"""

import argparse
import copy
import json
import os
import re
import sys
import warnings
from collections import Counter, defaultdict

import torch

# Not computations: freezing turns GetAttr into constants, so neither is paired or observed.
NOT_PAIRED = {"prim::Constant", "prim::GetAttr"}
UNINITIALIZED = {"aten::empty", "aten::empty_like", "aten::new_empty", "aten::empty_strided",
                 "aten::new_empty_strided"}
VIEWS = {"aten::slice", "aten::select", "aten::view", "aten::narrow", "aten::transpose",
         "aten::permute", "aten::unsqueeze", "aten::squeeze", "aten::expand", "aten::as_strided"}


def freeze_without_numerics(module):
    """The frozen side: freezing alone, as zoobench's `freeze` switch with fold_frozen off.
    freeze(mod, preserved_attrs=None, optimize_numerics=True) in torch 1.13 and 2.x alike."""
    with warnings.catch_warnings():  # torch >= 2.5 marks TorchScript deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.freeze(module, optimize_numerics=False)


def run(call, inputs):
    """CALL on fresh copies of INPUTS, seeded, with the executor's optimizations off: the fault
    reproduces so (docs/results.md), and fusion would regroup the ops around the clones."""
    torch.manual_seed(0)
    with torch.no_grad(), torch.jit.optimized_execution(False):
        return call(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])


def observe(graph, owner, inputs):
    """Runs GRAPH (a method's graph, changed in place; its first input is OWNER) on INPUTS with
    each tensor and number a top-level node makes snapshotted right after that node. Returns
    (its nodes in order, the graph's own output, {(node index, output index): value})."""
    nodes = list(graph.nodes())
    none = graph.insertConstant(None)
    if nodes:
        none.node().moveBefore(nodes[0])
    slots, snapshots = [], []
    for i, node in enumerate(nodes):
        after = node
        for k, value in enumerate(node.outputs()):
            kind = value.type().kind()
            if node.kind() in NOT_PAIRED or kind not in ("TensorType", "IntType", "FloatType",
                                                         "BoolType"):
                continue
            if kind == "TensorType":
                clone = graph.create("aten::clone", [value, none], 1)
                clone.output().setType(value.type())
                clone.insertAfter(after)
                after, value = clone, clone.output()
            slots.append((i, k))
            snapshots.append(value)
    # The graph now returns (its own output, the snapshots); nothing else in it changed.
    ret = graph.return_node()
    both = tuple_of(graph, [ret.inputsAt(0), tuple_of(graph, snapshots, ret)], ret)
    ret.replaceInput(0, both)
    # The real executor, not a Python interpreter of the ops, since the executor is under test:
    # a function made from the graph runs through the same GraphExecutor as a module's method.
    function = torch._C._create_function_from_graph("observed_forward", graph)
    output, values = run(lambda *args: function(owner._c, *args), inputs)
    return nodes, output, dict(zip(slots, values))


def tuple_of(graph, values, before):
    node = graph.create("prim::TupleConstruct", values, 1)
    node.output().setType(torch._C.TupleType([v.type() for v in values]))
    node.insertBefore(before)
    return node.output()


def compare(a, b, tol):
    """max_abs and how many elements differ by more than TOL (by anything if not floating);
    NaN against NaN and an inf against the same inf agree."""
    if not isinstance(a, torch.Tensor):
        d = abs(float(a) - float(b))
        return {"max_abs": d, "differing": int(d > tol), "numel": 1, "shape": [],
                "dtype": type(a).__name__}
    about = {"numel": a.numel(), "shape": list(a.shape), "dtype": str(a.dtype)[6:]}
    if a.shape != b.shape or a.dtype != b.dtype:
        return dict(about, max_abs=float("inf"), differing=a.numel(),
                    note="unfrozen has %s %s" % (list(b.shape), b.dtype))
    if a.numel() == 0:
        return dict(about, max_abs=0.0, differing=0)
    x, y = a.double(), b.double()
    same = (x == y) | (torch.isnan(x) & torch.isnan(y))
    d = torch.where(same, torch.zeros_like(x), (x - y).abs().nan_to_num(nan=float("inf")))
    limit = tol if a.is_floating_point() else 0.0
    return dict(about, max_abs=float(d.max()), differing=int((d > limit).sum()))


def exactly_equal(a, b):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return compare(a, b, 0.0)["differing"] == 0
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
        return all(exactly_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return all(exactly_equal(a[k], b[k]) for k in a)
    return type(a) == type(b) and a == b


def place(node):
    """Where a node comes from: its traced Python call stack and its module path."""
    return node.sourceRange(), node.getModuleHierarchy() or node.scopeName()


def pair_nodes(f_graph, f_nodes, u_graph, u_nodes):
    """{frozen index: unfrozen index}. Of the unpaired unfrozen nodes of the same kind and place,
    the one whose inputs correspond best, the first on a tie: a node that freezing folded away
    does not shift the pairs after it. A node with none pairs with one of another kind at its
    place whose paired inputs all correspond: freezing substituted an op."""
    def origins(graph, nodes):
        found = {v.unique(): (-1, j) for j, v in enumerate(graph.inputs())}
        found.update({v.unique(): (i, k) for i, n in enumerate(nodes)
                      for k, v in enumerate(n.outputs())})
        return found

    f_origin, u_origin = origins(f_graph, f_nodes), origins(u_graph, u_nodes)
    twin, used, by_place = {}, set(), defaultdict(list)
    for j, node in enumerate(u_nodes):
        by_place[place(node)].append(j)

    def fit(i, j):  # (inputs that contradict pairing i with j, inputs that confirm it)
        f_in, u_in = list(f_nodes[i].inputs()), list(u_nodes[j].inputs())
        if len(f_in) != len(u_in):
            return len(f_in) + len(u_in), 0
        checked = [(f_origin[fv.unique()], uv) for fv, uv in zip(f_in, u_in)]
        checked = [(((-1, k) if p < 0 else (twin[p], k)), uv) for (p, k), uv in checked
                   if p < 0 or p in twin]  # a constant of the frozen graph checks nothing
        good = sum(u_origin.get(uv.unique()) == expected for expected, uv in checked)
        return len(checked) - good, good

    for i, node in enumerate(f_nodes):
        if node.kind() in NOT_PAIRED:
            continue
        free = [j for j in by_place[place(node)] if j not in used]
        same = [j for j in free if u_nodes[j].kind() == node.kind()]
        other = [j for j in free if u_nodes[j].kind() not in NOT_PAIRED
                 and u_nodes[j].outputsSize() == node.outputsSize() and fit(i, j)[0] == 0
                 and fit(i, j)[1] > 0]
        best = min(same, key=lambda j: (fit(i, j)[0], j)) if same else (other or [None])[0]
        if best is not None:
            twin[i] = best
            used.add(best)
    return twin


def describe(node):
    """Kind, file:line as the graph prints it, the first frame outside torch (the model's own
    line when the op ran in torch.nn), module path and the node's text."""
    text = str(node).strip()
    source = text.rsplit(" # ", 1)[1].rsplit(":", 1)[0] if " # " in text else ""
    frames = [f for f in node.sourceRange().splitlines() if re.match(r"\S.*\(\d+\): \S+$", f)
              and not f.startswith(os.path.dirname(torch.__file__))]
    return {"kind": node.kind(), "source": source, "caller": frames[0] if frames else "",
            "scope": place(node)[1], "frozen_node": text}


def diff_frozen_graph(module, inputs, tol=1e-4, transform=freeze_without_numerics):
    """The report (a JSON-ready dict) on MODULE (a ScriptModule in eval mode) and what TRANSFORM
    (freezing, or a test's planted fault) makes of a copy of it, run on INPUTS."""
    frozen = transform(copy.deepcopy(module))  # freezing shares the parameters' storage
    f_graph, u_graph = frozen.inlined_graph, module.inlined_graph
    f_nodes, f_out, f_values = observe(f_graph, frozen, inputs)
    u_nodes, u_out, u_values = observe(u_graph, module, inputs)
    harness = {}
    for side, mod, out in (("unfrozen", module, u_out), ("frozen", frozen, f_out)):
        own = run(mod, inputs)
        harness[side] = {"equals_module": exactly_equal(out, own),
                         "module_repeatable": exactly_equal(own, run(mod, inputs))}
    harness["ok"] = harness["unfrozen"]["equals_module"] and harness["frozen"]["equals_module"]
    twin = pair_nodes(f_graph, f_nodes, u_graph, u_nodes)
    report = compare_pairs(f_nodes, f_values, u_nodes, u_values, twin, tol)

    def unmatched(nodes, paired):
        left = [n for j, n in enumerate(nodes) if j not in paired]
        return {"count": len(left), "by_kind": dict(Counter(n.kind() for n in left)),
                "nodes": [str(n).strip() for n in left if n.kind() not in NOT_PAIRED]}

    return dict(report, tol=tol, harness=harness, matched=len(twin),
                unmatched={"frozen": unmatched(f_nodes, set(twin)),
                           "unfrozen": unmatched(u_nodes, set(twin.values()))})


def compare_pairs(f_nodes, f_values, u_nodes, u_values, twin, tol):
    """Every paired node's values compared, in the frozen graph's order: the verdict, the first
    node that differs while its paired inputs agree, the five largest differences."""
    producer = {v.unique(): (i, k) for i, n in enumerate(f_nodes)
                for k, v in enumerate(n.outputs())}

    def node_of(value):  # the frozen node index that made VALUE; None for a graph input
        return producer.get(value.unique(), (None, None))[0]

    rows, diverged, uninitialized, first = [], set(), set(), None
    for i, node in enumerate(f_nodes):
        base = node_of(node.inputsAt(0)) if node.inputsSize() else None
        if node.kind() in UNINITIALIZED or (node.kind() in VIEWS and base in uninitialized):
            uninitialized.add(i)
            continue
        outputs = [(k, compare(f_values[(i, k)], u_values[(twin[i], k)], tol))
                   for k in range(node.outputsSize())
                   if i in twin and (i, k) in f_values and (twin[i], k) in u_values]
        if not outputs:
            continue
        k, worst = max(outputs, key=lambda o: o[1]["max_abs"])
        rows.append(dict(describe(node), output=k, **worst))
        if not any(c["max_abs"] > tol or c["differing"] for _, c in outputs):
            continue
        if first is None and all(node_of(v) not in diverged for v in node.inputs()):
            first = dict(rows[-1], twin_kind=u_nodes[twin[i]].kind(),
                         unfrozen_node=str(u_nodes[twin[i]]).strip(),
                         inputs=[input_info(v, producer, f_nodes, f_values, twin, diverged)
                                 for v in node.inputs()])
        diverged.add(i)
    largest = sorted((r for r in rows if r["max_abs"] > 0), key=lambda r: -r["max_abs"])[:5]
    return {"verdict": "diverges" if first else "no_divergence", "first": first,
            "largest": largest, "compared": len(rows),
            "uninitialized_not_compared": len(uninitialized)}


def input_info(value, producer, nodes, values, twin, diverged):
    i, k = producer.get(value.unique(), (None, None))
    seen = values.get((i, k))
    twin_state = ("differs" if i in diverged else "agrees") if i in twin else "no unfrozen twin"
    return {"name": "%" + value.debugName(),
            "value": "%s %s" % (list(seen.shape), str(seen.dtype)[6:])
                     if isinstance(seen, torch.Tensor) else str(value.type()),
            "from": "graph input" if i is None else "%s, %s" % (nodes[i].kind(), twin_state)}


def report_lines(report, header):
    lines = [header]
    if report["harness"]["ok"]:
        lines.append("harness: the instrumented runs' outputs equal module(*inputs) and "
                     "frozen(*inputs) exactly")
    else:
        lines.append("!!! HARNESS CHECK FAILED: an instrumented run's output differs from the "
                     "module's own (%s); the node values below may not be what ran"
                     % json.dumps(report["harness"]))
    lines.append("verdict: " + report["verdict"])
    first = report["first"]
    if first:
        note = "; " + first["note"] if "note" in first else ""
        lines += ["first diverging node: %s at %s, scope %s" % (first["kind"], first["source"],
                                                                first["scope"] or "-"),
                  "  called from: " + (first["caller"] or "-"),
                  "  frozen:   " + first["frozen_node"],
                  "  unfrozen: " + first["unfrozen_node"],
                  "  output %d: max_abs %.6g, %d of %d elements differ (%s %s)%s" % (
                      first["output"], first["max_abs"], first["differing"], first["numel"],
                      first["shape"], first["dtype"], note)]
        lines += ["  input %s: %s, from %s" % (x["name"], x["value"], x["from"])
                  for x in first["inputs"]]
    lines.append("largest differences:" + ("" if report["largest"] else " none"))
    lines += ["  %.6g  %s at %s (%s)" % (r["max_abs"], r["kind"], r["source"], r["scope"] or "-")
              for r in report["largest"]]
    left = report["unmatched"]
    lines.append("nodes: %d matched, %d compared, %d uninitialized not compared; unmatched: "
                 "frozen %d %s, unfrozen %d %s" % (
                     report["matched"], report["compared"], report["uninitialized_not_compared"],
                     left["frozen"]["count"], left["frozen"]["by_kind"],
                     left["unfrozen"]["count"], left["unfrozen"]["by_kind"]))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="TorchScript file (a repro's eval.pt)")
    parser.add_argument("--inputs", required=True, help="torch.save'd tuple of forward's inputs")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--tol", type=float, default=1e-4, help="max abs difference allowed")
    parser.add_argument("--json", help="also write the report here as JSON")
    args = parser.parse_args(argv)
    for flag, path in (("--model", args.model), ("--inputs", args.inputs)):
        if not os.path.isfile(path):
            parser.error("%s %s: no such file" % (flag, path))
    if args.tol < 0:
        parser.error("--tol must be >= 0")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: this torch sees no CUDA device")
    # Two runs of one op must agree bitwise for a difference to mean freezing.
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    module = torch.jit.load(args.model, map_location=args.device).eval()
    inputs = torch.load(args.inputs, map_location=args.device)
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    report = dict(diff_frozen_graph(module, inputs, args.tol), model=args.model,
                  device=args.device, torch=torch.__version__)
    print("\n".join(report_lines(report, "frozen_graph_diff: %s on %s, torch %s, tol %g" % (
        args.model, args.device, torch.__version__, args.tol))))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
