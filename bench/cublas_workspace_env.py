"""The host's cost of a small matmul on the GPU with and without CUBLAS_WORKSPACE_CONFIG set.

Accuracy checks set the variable (upstream's setup_determinism does too) so that cuBLAS is
deterministic. Some PyTorch 2.x releases parse it with std::regex on every cuBLAS call while it
is set, so an eager model timed in a process that still has it pays that on each matmul;
zoobench takes the value it set away before timing (util/compat.h). This prints, in one
process, the median microseconds per matmul (the host's launch cost: tiny matrices) unset, set,
and unset again.

    python3 bench/cublas_workspace_env.py [--calls 2000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch


def per_call_us(a: torch.Tensor, calls: int, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            torch.mm(a, a)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA device")
    a = torch.randn(16, 16, device="cuda")
    os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
    per_call_us(a, 200, 1)  # cuBLAS's handle and the kernel's first launch
    results = [("unset", per_call_us(a, args.calls, args.repeats))]
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    results.append(("set to :4096:8", per_call_us(a, args.calls, args.repeats)))
    del os.environ["CUBLAS_WORKSPACE_CONFIG"]
    results.append(("unset again", per_call_us(a, args.calls, args.repeats)))
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    for label, us in results:
        print(f"  CUBLAS_WORKSPACE_CONFIG {label:15s} {us:7.2f} us per 16x16 matmul (median of "
              f"{args.repeats} x {args.calls})")


if __name__ == "__main__":
    main()
