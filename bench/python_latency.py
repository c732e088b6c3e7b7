#!/usr/bin/env python3
"""The Python side of zoobench's latency comparisons (docs/performance.md).

Times a TorchScript file the way zoobench's performance experiment does -- warm-up, then
samples of N back-to-back iterations, CUDA events around each sample, median per iteration --
but from a Python loop, with PyTorch's own executor settings:

  python_latency.py --model zoo/.../eval.pt --inputs zoo/.../inputs.pt --device cuda [--optimize off]
  python_latency.py --trivial trivial.pt --device cuda     # writes the harness-overhead model, then times it

Prints one JSON line: {"model", "device", "median_ms", "p10_ms", "p90_ms", "samples", "iterations_per_sample"}.
"""
import argparse
import json
import statistics
import time

import torch


def percentile(values, p):
    values = sorted(values)
    rank = p / 100 * (len(values) - 1)
    lo, hi = int(rank), min(int(rank) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (rank - lo)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model")
    parser.add_argument("--inputs")
    parser.add_argument("--trivial", help="write a one-op TorchScript model here and time it")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--optimize", choices=["on", "off"], default="off",
                        help="TorchScript graph executor optimizations (off = zoobench's eager)")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--iterations", type=int, default=0, help="per sample (0: >= 1 ms)")
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()

    device = torch.device(args.device)
    if args.trivial:
        class Trivial(torch.nn.Module):
            def forward(self, x):
                return x + 1.0
        torch.jit.save(torch.jit.script(Trivial()), args.trivial)
        args.model = args.trivial
        inputs = (torch.ones(8, device=device),)
    else:
        inputs = tuple(t.to(device) for t in torch.load(args.inputs))
    module = torch.jit.load(args.model, map_location=device).eval()
    torch._C._set_graph_executor_optimize(args.optimize == "on")
    cuda = device.type == "cuda"

    def sample(count):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(count):
                module(*inputs)
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / count
        begin = time.perf_counter()
        for _ in range(count):
            module(*inputs)
        return (time.perf_counter() - begin) * 1e3 / count

    with torch.inference_mode():
        for _ in range(args.warmup):
            sample(1)
        one = sample(1)
        per_sample = args.iterations or max(1, int(1.0 / max(one, 1e-6)) + 1)
        times = [sample(per_sample) for _ in range(args.samples)]
    print(json.dumps({"model": args.model, "device": args.device, "optimize": args.optimize,
                      "median_ms": statistics.median(times), "p10_ms": percentile(times, 10),
                      "p90_ms": percentile(times, 90), "samples": len(times),
                      "iterations_per_sample": per_sample}))


if __name__ == "__main__":
    main()
