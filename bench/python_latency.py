#!/usr/bin/env python3
"""The Python side of zoobench's latency comparisons (docs/performance.md).

Times a TorchScript file the way zoobench's performance experiment does -- warm-up, then
samples of N back-to-back iterations, CUDA events around each sample, median per iteration --
but from a Python loop, with PyTorch's own executor settings:

  python_latency.py --model zoo/.../eval.pt --inputs zoo/.../inputs.pt --device cuda [--optimize off]
  python_latency.py --trivial trivial.pt --device cuda     # writes the harness-overhead model, then times it
  python_latency.py --model zoo/.../train.pt --inputs zoo/.../inputs.pt --training   # one SGD step

A training iteration is zoobench's eager training step: forward, the manifest's loss (upstream's
reduce_to_scalar_loss, or the model's own first output), backward, SGD (lr 0.01, one tensor at a
time like LibTorch's torch::optim::SGD), gradients zeroed in place.

Prints one JSON line: {"model", "device", "median_ms", "p10_ms", "p90_ms", "samples", "iterations_per_sample"}.
"""
import argparse
import json
import os
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
    parser.add_argument("--training", action="store_true", help="time a whole training step")
    parser.add_argument("--numerics", choices=["zoobench", "python-defaults"], default="zoobench",
                        help="zoobench: the settings of zoobench's performance runs (cuDNN "
                             "autotuning on, TF32 on, deterministic off); python-defaults: as torch starts")
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
    if args.numerics == "zoobench":  # compat::set_deterministic_numerics(false), util/compat.h
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.deterministic = False
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    module = torch.jit.load(args.model, map_location=device)
    torch._C._set_graph_executor_optimize(args.optimize == "on")
    cuda = device.type == "cuda"
    if args.training:
        module.train()
        step = training_step(module, inputs, manifest_loss_rule(args.model))
    else:
        module.eval()
        step = lambda: module(*inputs)  # noqa: E731

    def sample(count):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(count):
                step()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / count
        begin = time.perf_counter()
        for _ in range(count):
            step()
        return (time.perf_counter() - begin) * 1e3 / count

    with torch.inference_mode(not args.training):
        for _ in range(args.warmup):
            sample(1)
        one = sample(1)
        per_sample = args.iterations or max(1, int(1.0 / max(one, 1e-6)) + 1)
        times = [sample(per_sample) for _ in range(args.samples)]
    print(json.dumps({"model": args.model, "device": args.device, "optimize": args.optimize,
                      "mode": "training" if args.training else "inference",
                      "numerics": args.numerics,
                      "median_ms": statistics.median(times), "p10_ms": percentile(times, 10),
                      "p90_ms": percentile(times, 90), "samples": len(times),
                      "iterations_per_sample": per_sample}))


def manifest_loss_rule(model_path):
    manifest = os.path.join(os.path.dirname(model_path), "manifest.json")
    if not os.path.exists(manifest):
        return "mean_of_floating_outputs"
    with open(manifest) as f:
        return json.load(f).get("training", {}).get("loss", "mean_of_floating_outputs")


def reduce_to_scalar_loss(out):
    """Upstream's rule (zoobench/zoo/training_loss.cpp): mean over the floating tensors."""
    if isinstance(out, torch.Tensor):
        return out.sum() / out.numel() if out.is_floating_point() else None
    values = out.values() if isinstance(out, dict) else out
    losses = [loss for loss in (reduce_to_scalar_loss(v) for v in values) if loss is not None]
    return sum(losses) / len(losses) if losses else None


def training_step(module, inputs, loss_rule):
    parameters = [p for p in module.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(parameters, lr=0.01, foreach=False)

    def step():
        for p in parameters:
            if p.grad is not None:
                p.grad.zero_()
        out = module(*inputs)
        if loss_rule == "first_output":
            loss = out if isinstance(out, torch.Tensor) else out[0]
        else:
            loss = reduce_to_scalar_loss(out)
        loss.backward()
        optimizer.step()
    return step


if __name__ == "__main__":
    main()
