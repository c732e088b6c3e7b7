"""Where the tensor constants of a TorchScript file are: device, dtype and shape of each
prim::Constant that holds a tensor, as torch.jit.load gives them without a map_location (the
devices the file recorded), with the first op that uses each.

Written for the TorchScript-vs-Python eager kernel gap (docs/performance.md): ops
with a Python-number operand ran as broadcasting kernels with casting under TorchScript, and
the question is whether the trace recorded those operands on the GPU or zoobench's loading
moved them there.

    python3 tools/zoo_diag/trace_constants.py FILE.pt [FILE.pt ...] [--limit N]
    python3 tools/zoo_diag/trace_constants.py --selftest   # traces two small modules on CUDA

What it found on the H200 (torch 2.11): a trace records Python numbers (`y * 0.5`) as float64
CPU constants, and torch.tensor(v, device=x.device) as a CPU constant then aten::to; both
stay on the CPU when loaded without a map_location, as the Python module keeps them.

Exit status: 0 when every file loaded; 1 when one did not; 2 on a usage error.
"""

import argparse
import collections
import os
import sys
import tempfile

import torch


def graphs(module):
    """Every method graph of the module and its submodules, once per module type (instances of
    one TorchScript type share their methods; a Graph's Python wrapper is made anew on each
    access, so its id() cannot tell graphs apart)."""
    seen = set()
    stack = [module]
    while stack:
        m = stack.pop()
        stack.extend(m.children())
        kind = m._c._type().qualified_name()
        if kind in seen:
            continue
        seen.add(kind)
        for name in m._c._method_names():
            yield m._c._get_method(name).graph


def blocks(block):
    for node in block.nodes():
        yield node
        for b in node.blocks():
            yield from blocks(b)


def tensor_constants(module):
    """(tensor, first user's kind) for each tensor constant."""
    found = []
    for g in graphs(module):
        for node in blocks(g.block()):
            if node.kind() != "prim::Constant" or not node.hasAttribute("value"):
                continue
            if node.kindOf("value") != "t":
                continue
            out = node.output()
            users = [u.user.kind() for u in out.uses()]
            found.append((node.t("value"), users[0] if users else "-"))
    return found


def report(path, limit):
    module = torch.jit.load(path)
    constants = tensor_constants(module)
    by_kind = collections.Counter(
        (str(t.device), str(t.dtype).replace("torch.", ""), tuple(t.shape), user) for t, user in constants)
    print(f"{path}: {len(constants)} tensor constants")
    for (device, dtype, shape, user), n in by_kind.most_common(limit):
        print(f"  {n:5d} x {device:7s} {dtype:8s} shape {list(shape)} first used by {user}")
    return constants


SELFTEST = """
class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 8))
    def forward(self, x):
        scale = torch.tensor(0.5)                    # made on the CPU
        bias = torch.tensor(2.0, device=x.device)    # made on the GPU
        return torch.mm(x, self.w) * scale + bias

class PythonNumbers(torch.nn.Module):                # as HuggingFace code writes it
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 8))
    def forward(self, x):
        y = torch.mm(x, self.w)
        return y * 0.5 + 1.0 + y / 8.0
"""


def selftest():
    if not torch.cuda.is_available():
        print("--selftest needs CUDA")
        return 2
    scope = {"torch": torch}
    exec(SELFTEST, scope)
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("Scaled", "PythonNumbers"):
            model = scope[name]().cuda()
            traced = torch.jit.trace(model, torch.randn(3, 4, device="cuda"))
            print(f"-- {name}, as traced (before saving):")
            for t, user in tensor_constants(traced):
                print(f"  {t.device} {t.dtype} {list(t.shape)} used by {user}")
            print(traced.graph)
            path = os.path.join(tmp, name + ".pt")
            traced.save(path)
            report(path, 20)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--limit", type=int, default=20, help="kinds of constants listed per file")
    parser.add_argument("--selftest", action="store_true")
    args = parser.parse_args()
    if args.selftest:
        return selftest()
    if not args.files:
        parser.print_usage()
        return 2
    status = 0
    for path in args.files:
        try:
            report(path, args.limit)
        except Exception as e:  # a file that does not load is reported, the others still run
            print(f"{path}: does not load: {str(e).splitlines()[0]}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
