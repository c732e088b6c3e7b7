"""Reference side of the torch.save reader/writer tests (run with the python that has torch).

write_cases(dir): torch.save's each case to <dir>/<name>.pt and its description to <name>.txt.
write_torch2_cases(dir): files shaped like torch 2.x writes them (_rebuild_tensor_v3 with
    torch.UntypedStorage, _rebuild_from_type_v2, _rebuild_parameter_with_state, byteorder and
    .data/serialization_id records, tensor metadata), crafted with pickle since torch 1.13
    cannot produce them.
describe(obj): one line per node; the C++ test prints IValues in the same form.
"""

import collections
import io
import os
import pickle
import struct
import sys

import torch

SCALAR_TYPE = {  # c10::ScalarType numbering
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.complex64: 9,
    torch.complex128: 10, torch.bool: 11, torch.bfloat16: 15,
}
C10_NAME = {
    torch.uint8: "Byte", torch.int8: "Char", torch.int16: "Short", torch.int32: "Int",
    torch.int64: "Long", torch.float16: "Half", torch.float32: "Float", torch.float64: "Double",
    torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble", torch.bool: "Bool",
    torch.bfloat16: "BFloat16",
}


def float_bits(x):
    return struct.unpack("<q", struct.pack("<d", x))[0]


def describe(obj):
    lines = []
    storages = {}

    def visit(value, path):
        if isinstance(value, torch.Tensor):
            ptr = value.storage().data_ptr()
            if ptr == 0:
                sid = "none"
            else:
                sid = storages.setdefault(ptr, str(len(storages)))
            data = bytes(value.contiguous().reshape(-1).view(torch.uint8).tolist()).hex()
            lines.append(
                f"{path} tensor {C10_NAME[value.dtype]} sizes={list(value.shape)} "
                f"strides={list(value.stride())} offset={value.storage_offset()} "
                f"requires_grad={int(value.requires_grad)} storage={sid} data={data}")
        elif isinstance(value, bool):
            lines.append(f"{path} bool {int(value)}")
        elif isinstance(value, int):
            lines.append(f"{path} int {value}")
        elif isinstance(value, float):
            lines.append(f"{path} float {float_bits(value)}")
        elif isinstance(value, complex):
            lines.append(f"{path} complex {float_bits(value.real)} {float_bits(value.imag)}")
        elif isinstance(value, (str, bytes)):
            raw = value.encode() if isinstance(value, str) else value
            lines.append(f"{path} str {raw.hex()}")
        elif value is None:
            lines.append(f"{path} none")
        elif isinstance(value, torch.device):
            lines.append(f"{path} device {value}")
        elif isinstance(value, torch.dtype):
            lines.append(f"{path} int {SCALAR_TYPE[value]}")
        elif isinstance(value, tuple):
            lines.append(f"{path} tuple {len(value)}")
            for i, element in enumerate(value):
                visit(element, f"{path}[{i}]")
        elif isinstance(value, list):
            lines.append(f"{path} list {len(value)}")
            for i, element in enumerate(value):
                visit(element, f"{path}[{i}]")
        elif isinstance(value, dict):
            lines.append(f"{path} dict {len(value)}")
            for key, element in value.items():
                visit(element, f"{path}['{key}']" if isinstance(key, str) else f"{path}[{key}]")
        else:
            raise TypeError(f"cannot describe {type(value)}")

    visit(obj, "obj")
    return "\n".join(lines) + "\n"


def cases():
    torch.manual_seed(0)
    base = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    shared = torch.randn(5)
    dtypes = {}
    for dtype in SCALAR_TYPE:
        if dtype == torch.bool:
            dtypes[str(dtype)] = torch.tensor([True, False, True])
        elif dtype.is_complex:
            dtypes[str(dtype)] = torch.randn(3, dtype=dtype)
        elif dtype.is_floating_point:
            dtypes[str(dtype)] = torch.randn(2, 3).to(dtype)
        else:
            dtypes[str(dtype)] = torch.tensor([-3, 0, 7]).to(dtype)
    module = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    with_grad = torch.randn(3, requires_grad=True)
    return {
        "tensor": torch.randn(3, 4),
        "zero_dim": torch.tensor(3.5),
        "zero_dim_int": torch.tensor(7),
        "empty": torch.empty(0, 3),
        "one_item_dict": {"a": torch.ones(2)},
        "one_item_list": [torch.ones(1)],
        "one_tuple": (torch.ones(1),),
        "views": [base, base.permute(2, 0, 1), base[:, 1:, ::2], base.transpose(0, 1), base[1],
                  base.flatten()[5:7], base[0, 0, 3]],
        "shared_twice": (shared, shared, shared[1:3]),
        "channels_last": torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
        "expanded": torch.randn(3, 1).expand(3, 4),
        "dtypes": dtypes,
        "nested": {"a": [1, 2.5, None, True, "x", (torch.zeros(1), [])],
                   "b": {"c": {"d": torch.ones(1, dtype=torch.float64)}}, 3: "int key"},
        "ordered": collections.OrderedDict([("z", torch.ones(1)), ("a", 2)]),
        "state_dict": module.state_dict(),
        "parameter": torch.nn.Parameter(torch.randn(2, 2)),
        "requires_grad": with_grad,
        "size": torch.Size([2, 3]),
        "ints": [0, 1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, -1, 2**40, -2**40,
                 2**63 - 1, -2**63],
        "floats": [0.0, -0.0, 1e-300, 1 / 3, float("inf"), float("-inf"), float("nan")],
        "strings": ["", "unicode: \u00fc\u2713", "a" * 300],
        "bytes": b"\x00\x01\xffbytes",
        "device": torch.device("cpu"),
        "dtype": torch.float16,
        "complex": 1 + 2j,
        "empty_containers": ([], (), {}),
        "long_list": list(range(2500)),
        "big_dict": {str(i): i for i in range(1500)},
        "scalar_float": 2.5,
        "scalar_none": None,
    }


def write_cases(directory, protocol=2):
    for name, obj in cases().items():
        torch.save(obj, os.path.join(directory, f"{name}.pt"), pickle_protocol=protocol)
        with open(os.path.join(directory, f"{name}.txt"), "w") as out:
            out.write(describe(obj))


# ---- files as torch 2.x writes them ----

class _UntypedStorageRef:
    """Stands for torch.UntypedStorage bytes in the persistent id."""

    def __init__(self, key, nbytes):
        self.key, self.nbytes = key, nbytes


def _install_torch2_names():
    # 1.13 lacks some of the globals 2.x files name; pickle needs them importable.
    def _rebuild_tensor_v3(*args):
        raise NotImplementedError

    def _rebuild_parameter_with_state(*args):
        raise NotImplementedError

    if not hasattr(torch._utils, "_rebuild_tensor_v3"):
        _rebuild_tensor_v3.__module__ = "torch._utils"
        _rebuild_tensor_v3.__qualname__ = "_rebuild_tensor_v3"
        torch._utils._rebuild_tensor_v3 = _rebuild_tensor_v3
    if not hasattr(torch._utils, "_rebuild_parameter_with_state"):
        _rebuild_parameter_with_state.__module__ = "torch._utils"
        _rebuild_parameter_with_state.__qualname__ = "_rebuild_parameter_with_state"
        torch._utils._rebuild_parameter_with_state = _rebuild_parameter_with_state


class _Reduce:
    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def write_torch2_cases(directory):
    """Writes torch2.pt and torch2.txt (what torch.load in 2.x would return)."""
    _install_torch2_names()
    values = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    bf16 = torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16)
    raw_f32 = bytes(values.reshape(-1).view(torch.uint8).tolist())
    raw_bf16 = bytes(bf16.view(torch.uint8).tolist())
    storages = {"0": raw_f32, "1": raw_bf16}
    s0 = _UntypedStorageRef("0", len(raw_f32))
    s1 = _UntypedStorageRef("1", len(raw_bf16))
    hooks = collections.OrderedDict()
    v3 = _Reduce(torch._utils._rebuild_tensor_v3, (s0, 0, (3, 4), (4, 1), False, hooks, torch.float32))
    v3_view = _Reduce(torch._utils._rebuild_tensor_v3,
                      (s0, 1, (4, 2), (1, 4), False, hooks, torch.float32, {}))
    v3_bf16 = _Reduce(torch._utils._rebuild_tensor_v3, (s1, 0, (3,), (1,), False, hooks, torch.bfloat16))
    from_type = _Reduce(torch._tensor._rebuild_from_type_v2,
                        (torch._utils._rebuild_tensor_v3, torch.Tensor,
                         (s0, 4, (4,), (1,), False, hooks, torch.float32), {"attribute": 1}))
    param = _Reduce(torch._utils._rebuild_parameter_with_state,
                    (v3_bf16, True, hooks, {"state": 1}))
    obj = {"v3": v3, "view": v3_view, "bf16": v3_bf16, "from_type": from_type, "param": param}

    class Pickler(pickle.Pickler):
        def persistent_id(self, value):
            if isinstance(value, _UntypedStorageRef):
                return ("storage", torch.UntypedStorage, value.key, "cpu", value.nbytes)
            return None

    buffer = io.BytesIO()
    Pickler(buffer, protocol=2).dump(obj)
    writer = torch._C.PyTorchFileWriter(os.path.join(directory, "torch2.pt"))
    writer.write_record("data.pkl", buffer.getvalue(), len(buffer.getvalue()))
    writer.write_record("byteorder", b"little", 6)
    writer.write_record(".data/serialization_id", b"1234567890", 10)
    for key, raw in storages.items():
        writer.write_record(f"data/{key}", raw, len(raw))
    writer.write_end_of_file()
    del writer

    full = values.reshape(-1)
    expected = {
        "v3": values,
        "view": full.as_strided((4, 2), (1, 4), 1),
        "bf16": bf16,
        "from_type": full[4:8],
        "param": torch.nn.Parameter(bf16.clone(), requires_grad=True),
    }
    text = describe(expected)
    # The parameter is its own storage in `expected` but shares storage "1" with "bf16" in
    # the file: renumber so both sides say what the file says.
    text = text.replace("obj['param'] tensor BFloat16 sizes=[3] strides=[1] offset=0 "
                        "requires_grad=1 storage=2",
                        "obj['param'] tensor BFloat16 sizes=[3] strides=[1] offset=0 "
                        "requires_grad=1 storage=1")
    with open(os.path.join(directory, "torch2.txt"), "w") as out:
        out.write(text)


if __name__ == "__main__":
    getattr(sys.modules[__name__], sys.argv[1])(*sys.argv[2:])
