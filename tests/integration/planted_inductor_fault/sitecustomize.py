"""Test-only, for tests/integration/gpu/compiler_bisector_cuda_test.cpp: a wrong Inductor lowering
of one aten op, planted in every Python that starts with this folder on PYTHONPATH while
ZOOBENCH_TEST_PLANT_INDUCTOR_FAULT=relu_as_abs, the embedded Python of each `zoobench run` child
among them (it honours PYTHONPATH and imports sitecustomize like any interpreter).

Inductor then lowers aten.relu as aten.abs. Upstream's own tests plant faults the same way, in
the table the compiler consults (test/dynamo/test_compiler_bisector.py: a wrong decomposition
in select_decomp_table, a relu bug injected into Inductor's code generation). Eager, dynamo's
aot_eager stages and zoobench's TorchScript reference never consult Inductor's lowerings, so a
model with a ReLU fails accuracy only under inductor, and only where Inductor lowers the relu
node itself: the compiler bisector's `lowerings` subsystem falls back to ATen's kernel for the
nodes it disables, which removes the fault.

A torch without Inductor (Debian's 1.13) has nothing to plant into: the variable is ignored.
This file shadows any other sitecustomize on sys.path while its folder is on PYTHONPATH; only
the test that plants the fault puts it there.
"""

import os
import sys

if os.environ.get("ZOOBENCH_TEST_PLANT_INDUCTOR_FAULT") == "relu_as_abs":
    try:
        import torch
        from torch._inductor import lowering
    except ImportError:
        lowering = None
    if lowering is not None:
        _abs = lowering.lowerings[torch.ops.aten.abs.default]

        def _relu_lowered_as_abs(x):
            """relu(x) is max(x, 0); |x| agrees on x >= 0 only."""
            return _abs(x)

        lowering.lowerings[torch.ops.aten.relu.default] = _relu_lowered_as_abs
        sys.stderr.write("zoobench test: Inductor lowers aten.relu as aten.abs in this process "
                         "(ZOOBENCH_TEST_PLANT_INDUCTOR_FAULT)\n")
