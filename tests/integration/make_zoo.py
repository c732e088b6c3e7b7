"""Small zoos for the integration tests, made through the exporter's --from-torchscript path.

build(zoo, suites_dir, suite, models) scripts each named model kind with torch.jit.script, saves
it and its inputs, and adds it to the zoo with `export_zoo.py --from-torchscript` (called in this
process, so the zoobench_test operators defined here exist when the exporter loads the file).
Model kinds:
  mlp, mlp_wide, conv  good models (tiny MLPs of two widths, a tiny conv net)
  raiser       forward raises RuntimeError("boom ...")
  hang         forward never returns (a TorchScript while loop whose condition stays true)
  hang_after_20_calls  returns on its first 20 calls, then hangs: accuracy passes, performance
               hangs
  slow         an MLP whose every call also multiplies 400x400 matrices 25 times, to no effect
               on its output: its check's process lasts several seconds where an MLP's lasts
               one (most of it the process's start and load)
  abort        calls zoobench_test::abort (zoobench's fault_injection patch: SIGABRT)
  segfault     calls zoobench_test::segfault (fault_injection patch: null write, SIGSEGV)
  huge_alloc   allocates 2**57 bytes, beyond any address space (c10 "can't allocate memory")
  truncated    an MLP whose eval.pt is cut in half after export; the manifest's sha256 is
               updated so that loading, not verification, is what fails
  sha_mismatch an MLP with one byte of inputs.pt flipped after export
  bad_json     an MLP whose manifest.json is cut off mid-object
  link_loop    an MLP whose eval.pt is a symbolic link to itself (a path that cannot be
               resolved: reading it fails with ELOOP)
  planted      an MLP whose last layer, the child `planted`, is of class PlantedLinear (for the
               planted-fault patch test_scale_planted, which scales that class's output on the
               compiled side; it ends in a child `post`, a Tanh); its first part is the
               Sequential `body` of Linear and ReLU
  pair         a linear layer with outputs below 0.05 in magnitude, then the identity children
               `pair_a` and `pair_b` of classes PairA and PairB (for test_offset_pair_a / _b,
               which each add 0.006 there)
Kinds the Python backends (python_eager, torch.compile) can rebuild, through python_models.py's
build(name, context) (their manifests get a `rebuild` record naming it):
  py_mlp, py_conv   the good models
  py_raiser    eval.pt is the MLP; rebuilt, its forward raises in Python from the second call
               on (the first is the identity check)
  py_hang      likewise, but sleeps forever from the second call on
  py_changed   eval.pt is the MLP; rebuilt, it computes tanh where the export has relu
  py_reseeded  an MLP with a value outside its weights (a plain attribute drawn at
               construction), rebuilt under another seed: another model than the exported one
"""

import hashlib
import json
import os
import sys
import tempfile

import torch
from torch import nn

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))

import export_zoo  # noqa: E402
from python_models import Conv, Mlp  # noqa: E402

# The same schemas as zoobench's fault_injection patch (src/zoobench/patches/fault_injection.h),
# with harmless Python kernels: only scripting needs them; zoobench runs the C++ ones.
_LIB = torch.library.Library("zoobench_test", "DEF")
_LIB.define("segfault(Tensor x) -> Tensor")
_LIB.define("abort(Tensor x) -> Tensor")
_LIB.impl("segfault", lambda x: x.clone(), "CompositeExplicitAutograd")
_LIB.impl("abort", lambda x: x.clone(), "CompositeExplicitAutograd")

class Raiser(nn.Module):
    def forward(self, x):
        y = x * 2
        if bool(y.sum() > -1e30):
            raise RuntimeError("boom: this model raises on purpose")
        return y


class Hang(nn.Module):
    def forward(self, x):
        y = x
        while bool(y.sum() > -1e30):
            y = y + 0.0
        return y


class HangAfter20Calls(nn.Module):
    """Returns for the first 20 calls, then never (the count lives in the module, so clones
    share it): an accuracy check finishes, the performance measurement that follows hangs."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = x * 2
        while self.calls > 20 and bool(y.sum() > -1e30):
            y = y + 0.0
        return y


class Slow(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.square = nn.Parameter(torch.randn(400, 400) / 400 ** 0.5)

    def forward(self, x):
        z = self.square
        # Seconds of a check on 2 cores, several times the MLP's check even when a loaded
        # machine slows the MLP's process start (25 rounds left it only 3.9x, 2026-12-03).
        for _ in range(60):
            z = torch.tanh(z @ self.square)  # bounded: 0 * its mean is 0
        return self.fc(x) + 0.0 * z.mean()


class Abort(nn.Module):
    def forward(self, x):
        return torch.ops.zoobench_test.abort(x) + 1


class Segfault(nn.Module):
    def forward(self, x):
        return torch.ops.zoobench_test.segfault(x) + 1


class HugeAlloc(nn.Module):
    def forward(self, x):
        # 2**55 float32 elements = 2**57 bytes, more than a 57-bit (5-level paging) address
        # space: the allocation fails whatever the machine's memory and overcommit settings.
        big = torch.empty([36028797018963968], dtype=torch.float32, device=x.device)
        return x + big[0]


class PlantedLinear(nn.Linear):
    """A Linear the planted-fault patch finds by its class, with a child of its own."""

    def __init__(self, *args):
        super().__init__(*args)
        self.post = nn.Tanh()

    def forward(self, x):
        return self.post(nn.functional.linear(x, self.weight, self.bias))


class PairA(nn.Identity):
    pass


class PairB(nn.Identity):
    pass


class CastBody(nn.Module):
    """Linear and ReLU, then a cast to float32 as HuggingFace's attention has one
    (`attn_weights.type(value.dtype)`, recorded as the constant float32): the float64 runs
    must widen it, the submodule capture's too, or the next layer meets two dtypes."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 16)

    def forward(self, x):
        return torch.relu(self.linear(x)).to(torch.float32)


class Planted(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = CastBody()
        self.planted = PlantedLinear(16, 4)

    def forward(self, x):
        return self.planted(self.body(x))


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 4)
        self.pair_a = PairA()
        self.pair_b = PairB()

    def forward(self, x):
        # Small outputs: allclose's atol + rtol * |ref| stays near the tolerance itself.
        return self.pair_b(self.pair_a(torch.tanh(self.body(x)) * 0.05))


def _add_rebuild_record(folder: str, name: str, kind: str) -> None:
    manifest_path = os.path.join(folder, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["rebuild"] = {"source": "python_models", "name": name,
                           "python_path": os.path.dirname(os.path.abspath(__file__)),
                           "seed": 1 if kind == "py_reseeded" else 0,
                           "context": {"batch_size": 2, "options": {"kind": kind}}}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)


# py_* kind -> the kind whose TorchScript make_zoo exports for it
_EXPORTED_AS = {"py_mlp": "mlp", "py_conv": "conv", "py_raiser": "mlp", "py_hang": "mlp",
                "py_changed": "mlp", "py_reseeded": "reseeded"}


def _module_and_inputs(kind: str):
    if kind in _EXPORTED_AS:
        exported = _EXPORTED_AS[kind]
        if exported == "reseeded":
            from python_models import Reseeded

            torch.manual_seed(0)
            return Reseeded(), (torch.randn(2, 8),)
        return _module_and_inputs(exported)
    if kind == "conv":
        return Conv(), (torch.randn(2, 3, 8, 8),)
    if kind == "mlp_wide":
        return Mlp(32), (torch.randn(2, 8),)
    modules = {"raiser": Raiser, "hang": Hang, "hang_after_20_calls": HangAfter20Calls,
               "slow": Slow, "abort": Abort, "segfault": Segfault, "huge_alloc": HugeAlloc,
               "planted": Planted, "pair": Pair}
    return modules.get(kind, Mlp)(), (torch.randn(2, 8),)


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _corrupt(folder: str, kind: str) -> None:
    manifest_path = os.path.join(folder, "manifest.json")
    if kind == "truncated":
        path = os.path.join(folder, "eval.pt")
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        with open(manifest_path) as f:
            manifest = json.load(f)
        manifest["artifacts"]["eval"]["sha256"] = _sha256(path)
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=2)
    elif kind == "sha_mismatch":
        path = os.path.join(folder, "inputs.pt")
        with open(path, "r+b") as f:
            f.seek(os.path.getsize(path) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0xFF]))
    elif kind == "link_loop":
        path = os.path.join(folder, "eval.pt")
        os.remove(path)
        os.symlink("eval.pt", path)
    elif kind == "bad_json":
        with open(manifest_path) as f:
            text = f.read()
        with open(manifest_path, "w") as f:
            f.write(text[: len(text) // 2])


def build(zoo: str, suites_dir: str, suite: str, models: dict) -> None:
    """models: {name: kind}."""
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as work:
        for name, kind in models.items():
            module, inputs = _module_and_inputs(kind)
            script_path = os.path.join(work, name + ".pt")
            inputs_path = os.path.join(work, name + ".inputs.pt")
            torch.jit.save(torch.jit.script(module.eval()), script_path)
            torch.save(inputs, inputs_path)
            status = export_zoo.main(["--from-torchscript", script_path, "--inputs", inputs_path,
                                      "--name", name, "--suite", suite, "--zoo", zoo,
                                      "--suites-dir", suites_dir])
            if status != 0:
                raise SystemExit(f"export_zoo failed for {name} ({kind}): status {status}")
            _corrupt(os.path.join(zoo, suite, name), kind)
            if kind in _EXPORTED_AS:
                _add_rebuild_record(os.path.join(zoo, suite, name), name, kind)
