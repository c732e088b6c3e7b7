#!/usr/bin/env python3
"""Would an AOTInductor package of the whole training step beat torch.compile's training?
(issue 18, target 2: zoobench's training runs ATen's kernels, and loses to Inductor's fused
ones on the BERT-style encoder, 1.11x.)

The step as a package: the forward, the loss and the backward traced together into one ATen
graph whose inputs are the parameters, the buffers and the model's inputs and whose outputs are
the loss and the gradients (make_fx through torch.autograd.grad: no autograd left in the graph),
exported and compiled by AOTInductor as zoobench's inference packages are. The optimizer stays
outside (SGD as one multi-tensor update, zoobench's step), and the parameters are the package's
inputs, so the update needs nothing from the package's internals. What torch.compile gets is
upstream's training: forward, loss and backward compiled as one function, SGD eager.

Each side runs in a process of its own (a crash or an unsupported step costs that side only):

  training_package.py --model text_encoder_bert_dropout [--batch-size 8] [--iterations 30]
  training_package.py --model resnet50 --sides eager,inductor,package [--no-dropout]

Sides: eager; inductor and inductor:reduce-overhead (torch.compile); package (the compiled
step); package_graph (the package and the SGD update replayed as one CUDA graph; it loads the
package side's package, compiled once). The package sides compile the package in Python and
time it in bench_training_package_runner, LibTorch's C++ loader as zoobench's aot_inductor
backend runs packages (--loader python: PyTorch's aoti_load_package, which died of a
segmentation fault while loading on the H200). Each side: its preparation (compile, or export
and compile), median and p10/p90 milliseconds per step (synchronised, warm-up first), and
with --no-dropout the package's loss and gradients against the model's autograd from the
same weights. Prints one JSON line a side, then a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Sequence, Tuple

import torch
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools"))
from zoo_compile.session import training_loss  # noqa: E402
from zoo_export import training_step  # noqa: E402
from zoo_export.model_bundle import disable_dropout  # noqa: E402

# Where the build puts the C++ runner: the GPU machine's build (scripts/gpu-check.sh), then this
# machine's.
RUNNER_PLACES = ["build-gpu/bench/bench_training_package_runner",
                 "build/bench/bench_training_package_runner"]
SIDES = ["eager", "inductor", "inductor:reduce-overhead", "package", "package_graph"]
LEARNING_RATE = 0.01


def default_runner() -> str:
    for place in RUNNER_PLACES:
        if os.path.exists(os.path.join(REPO, place)):
            return os.path.join(REPO, place)
    return os.path.join(REPO, RUNNER_PLACES[0])


# --- the model ----------------------------------------------------------------------------------

def build(name: str, batch_size: int, device: str) -> Tuple[nn.Module, Tuple[torch.Tensor, ...]]:
    """The training table's models, with the zoo's seed and inputs."""
    torch.manual_seed(0)
    if name.startswith("text_encoder"):
        from types import SimpleNamespace
        from zoo_export.sources import text_encoder
        bundle = text_encoder.build(name, SimpleNamespace(seq_len=None, batch_size=batch_size))
        model, inputs = bundle.module, bundle.inputs
    elif name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50(weights=None)
        inputs = (torch.randn(batch_size, 3, 224, 224),)
    else:
        raise SystemExit(f"unknown model {name!r}: text_encoder_bert[_dropout] or resnet50")
    return model.to(device).train(), tuple(t.to(device) for t in inputs)


def loss_of(outputs) -> torch.Tensor:
    """zoobench's default training loss (the manifest's mean_of_floating_outputs), as its
    Python backends compute it."""
    return training_loss(outputs, "mean_of_floating_outputs", 1.0)


# --- the sides ------------------------------------------------------------------------------------

def sgd(parameters: List[torch.Tensor], gradients: Sequence[torch.Tensor]) -> None:
    torch._foreach_add_(parameters, list(gradients), alpha=-LEARNING_RATE)


def eager_side(model, inputs):
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(model(*inputs))
        loss.backward()
        optimizer.step()
    return step, 0.0


def compile_side(model, inputs, mode):
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

    def forward_and_backward(args):
        loss = loss_of(model(*args))
        loss.backward()
        return loss

    compiled = torch.compile(forward_and_backward, mode=mode)
    mark = getattr(torch.compiler, "cudagraph_mark_step_begin", None)

    def step():
        if mode == "reduce-overhead" and mark is not None:
            mark()
        optimizer.zero_grad(set_to_none=True)
        compiled(inputs)
        optimizer.step()

    start = time.monotonic()
    state = [b.clone() for b in model.buffers()]
    for _ in range(3):  # compiled (and recorded) here: the compile is not a step
        step()
    synchronize()
    with torch.no_grad():
        for b, saved in zip(model.buffers(), state):
            b.copy_(saved)
    return step, time.monotonic() - start


def compile_package(model, inputs, path: str) -> None:
    """The step as a package at PATH (unless an earlier side compiled it there), as the
    exporter writes it (tools/export_zoo.py --aoti --training)."""
    import torch._inductor
    if os.path.exists(path):
        return
    training_step.export_step_package(
        model, inputs, loss_of, os.path.dirname(path) or ".", os.path.basename(path), False,
        lambda program, where: torch._inductor.aoti_compile_and_package(program,
                                                                        package_path=where))


def package_side_in_cpp(model, inputs, captured: bool, path: str, runner: str, args):
    """The package timed by bench_training_package_runner (LibTorch's C++ loader, as zoobench's
    aot_inductor backend loads packages): the row's timing, and with --no-dropout the outputs of
    one call, for check_package."""
    start = time.monotonic()
    compile_package(model, inputs, path)
    parameters = [p.detach() for p in model.parameters()]
    flat = [t.detach().cpu() for t in (*parameters, *model.buffers(), *inputs)]
    tensors = os.path.join(args.work, "flat.pt")
    torch.save(flat, tensors)
    command = [runner, "--package", path, "--tensors", tensors,
               "--parameters", str(len(parameters)), "--learning-rate", str(LEARNING_RATE),
               "--warmup", str(args.warmup), "--iterations", str(args.iterations)]
    if captured:
        command.append("--graph")
    outputs_path = os.path.join(args.work, "outputs.pt")
    checked = args.no_dropout and not captured  # with dropout the masks would differ
    if checked:
        command += ["--outputs", outputs_path]
    prepare_s = time.monotonic() - start
    done = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{os.path.basename(runner)} exit {done.returncode}: "
                           f"{done.stderr.strip()[-2000:]}")
    row = json.loads(lines[-1])
    row["prepare_s"] = round(prepare_s + row["prepare_s"], 1)
    return row, (torch.load(outputs_path) if checked else None)


def package_side(model, inputs, captured: bool, path: str):
    """The step as a package at PATH, loaded by PyTorch's Python loader (aoti_load_package);
    returns (step, prepare seconds, the package and its arguments). On the H200 with
    PyTorch 2.11 this loader dies of a segmentation fault in AOTIModelPackageLoader's
    constructor (2026-12-03e, -03f); --loader cpp, the default, runs the same package through
    the C++ loader instead."""
    import torch._inductor
    start = time.monotonic()
    # The model's own tensors (detach shares them): SGD updates the model as the package sees it.
    parameters = [p.detach() for p in model.parameters()]
    buffers = list(model.buffers())
    flat = (*parameters, *buffers, *inputs)
    compile_package(model, inputs, path)
    try:
        package = torch._inductor.aoti_load_package(path, run_single_threaded=captured)
    except TypeError:  # an older loader without the argument
        package = torch._inductor.aoti_load_package(path)
    prepare_s = time.monotonic() - start

    def step():
        outputs = package(*flat)
        sgd(parameters, outputs[1:])

    if not captured:
        return step, prepare_s, (package, flat)
    side = torch.cuda.Stream()  # warm-up on a side stream, as PyTorch's capture recipe has it
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    cuda_graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(cuda_graph):
        step()
    return cuda_graph.replay, prepare_s, (package, flat)


def check_package(got: Sequence[torch.Tensor], model, inputs) -> Dict[str, float]:
    """The package's outputs of one call (GOT) against the model's own autograd from the same
    weights (dropout off): the largest difference of the loss and of each gradient, relative
    to the largest value autograd gave it."""
    model.zero_grad(set_to_none=True)
    loss = loss_of(model(*inputs))
    loss.backward()
    expected = [loss.detach(), *[p.grad for p in model.parameters()]]
    worst = 0.0
    for a, b in zip(got, expected):
        a = a.to(b.device)
        scale = float(b.abs().max()) or 1.0
        worst = max(worst, float((a - b).abs().max()) / scale)
    return {"outputs": len(got), "expected": len(expected), "worst_relative_difference": worst}


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_steps(step: Callable[[], None], warmup: int, iterations: int) -> Dict[str, float]:
    for _ in range(warmup):
        step()
    synchronize()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        step()
        synchronize()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    return {"median_ms": statistics.median(samples), "p10_ms": samples[len(samples) // 10],
            "p90_ms": samples[(9 * len(samples)) // 10], "steps": iterations}


def run_side(args) -> Dict[str, object]:
    # The numerics of zoobench's timed runs (and torch.compile's there).
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    model, inputs = build(args.model, args.batch_size, args.device)
    if args.no_dropout:
        disable_dropout(model)
    row: Dict[str, object] = {"model": args.model, "side": args.side, "batch_size": args.batch_size,
                              "dropout": not args.no_dropout}
    if args.side == "eager":
        step, prepare_s = eager_side(model, inputs)
    elif args.side.startswith("inductor"):
        mode = args.side.partition(":")[2] or None
        step, prepare_s = compile_side(model, inputs, mode)
    else:
        # One compile for both package sides (the second loads the first's): a BERT-size step
        # takes minutes.
        path = os.path.join(args.work, f"{args.model}-bs{args.batch_size}-"
                                       f"{'no-dropout' if args.no_dropout else 'dropout'}.pt2")
        row["package_compiled_here"] = not os.path.exists(path)
        captured = args.side == "package_graph"
        if args.loader == "cpp":
            timing, outputs = package_side_in_cpp(model, inputs, captured, path, args.runner, args)
            row.update(timing)
            if outputs is not None:
                row["check"] = check_package(outputs, model, inputs)
            return row
        step, prepare_s, (package, flat) = package_side(model, inputs, captured, path)
        row["loader"] = "Python aoti_load_package"
    row["prepare_s"] = round(prepare_s, 1)
    row.update(time_steps(step, args.warmup, args.iterations))
    if args.side == "package" and args.no_dropout:  # with dropout the masks would differ
        row["check"] = check_package(package(*flat), model, inputs)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="text_encoder_bert_dropout")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", default="cuda", help="cuda (cpu: to try the script itself)")
    parser.add_argument("--sides", default=",".join(SIDES))
    parser.add_argument("--side", help=argparse.SUPPRESS)  # one side, in this process
    parser.add_argument("--work", help=argparse.SUPPRESS)  # the sides' shared folder
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=420.0, help="seconds a side may take")
    parser.add_argument("--loader", choices=["cpp", "python"], default="cpp",
                        help="what loads the package sides' package: cpp (the default), "
                             "bench_training_package_runner, LibTorch's C++ loader as zoobench's "
                             "aot_inductor backend uses it; python, PyTorch's aoti_load_package")
    parser.add_argument("--runner", default=default_runner(),
                        help="bench_training_package_runner (default: the first of "
                             f"{', '.join(RUNNER_PLACES)} that exists)")
    parser.add_argument("--no-dropout", action="store_true",
                        help="every side with dropout off (where the package's random numbers "
                             "are the question)")
    args = parser.parse_args()
    if args.side:
        print(json.dumps(run_side(args)), flush=True)
        return 0

    sides = args.sides.split(",")
    for side in sides:
        if side not in SIDES:
            parser.error(f"unknown side {side!r}: {', '.join(SIDES)}")
    if args.loader == "cpp" and any(s.startswith("package") for s in sides) \
            and not os.path.exists(args.runner):
        parser.error(f"no C++ runner at {args.runner}: build it (cmake --build <build> --target "
                     "bench_training_package_runner) and give --runner, or use --loader python")

    rows = []
    work = tempfile.TemporaryDirectory()
    for side in sides:
        # faulthandler: a side that crashes (the package side's loader did, with a segmentation
        # fault, on the H200 on 2026-12-03e) prints the Python stack where it died.
        command = [sys.executable, "-X", "faulthandler", os.path.abspath(__file__),
                   "--side", side, "--model", args.model,
                   "--batch-size", str(args.batch_size), "--device", args.device,
                   "--work", work.name, "--warmup", str(args.warmup),
                   "--iterations", str(args.iterations), "--loader", args.loader,
                   "--runner", args.runner] + (["--no-dropout"] if args.no_dropout else [])
        print(f"-- {args.model} {side}", file=sys.stderr, flush=True)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            row = json.loads(lines[-1]) if done.returncode == 0 and lines else {
                "model": args.model, "side": side,
                "failed": f"exit {done.returncode}: " + " / ".join(
                    line.strip() for line in done.stderr.strip().splitlines()[-3:])}
            if "failed" in row:  # the whole of it for the log; the row keeps its last lines
                print(done.stderr, file=sys.stderr, flush=True)
        except subprocess.TimeoutExpired:
            row = {"model": args.model, "side": side, "failed": f"over {args.timeout:.0f} s"}
        print(json.dumps(row), flush=True)
        rows.append(row)
    work.cleanup()

    compiled = [r["median_ms"] for r in rows if str(r["side"]).startswith("inductor") and "median_ms" in r]
    best = min(compiled) if compiled else None
    print(f"\n| {args.model} (batch {args.batch_size}) | ms per step (p10-p90) | prepare s | / torch.compile's fastest |")
    print("|---|---:|---:|---:|")
    for r in rows:
        if "median_ms" not in r:
            print(f"| {r['side']} | failed: {r['failed'][:160]} | | |")
            continue
        ratio = f"{r['median_ms'] / best:.2f}x" if best else "-"
        print(f"| {r['side']} | {r['median_ms']:.2f} ({r['p10_ms']:.2f}-{r['p90_ms']:.2f}) | "
              f"{r['prepare_s']} | {ratio} |")
    for r in rows:
        if "check" in r:
            print(f"\npackage check (dropout off, one step from the same weights): {json.dumps(r['check'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
