#!/usr/bin/env python3
"""Builds judged accuracy cases for `zoobench same` from small real models.

On the GPU machine (PyTorch 2.11, timm): timm's resnet18, mobilenetv3_large_100 and
deit_tiny_patch16_224 run eager, torch.compile'd, in bfloat16, with noise added at several
scales, for inference and (resnet18) training gradients. Every case is saved as ref.pt /
res.pt / fp64.pt (torch.save, CPU tensors) and judged by upstream's own
torch._dynamo.utils.same on exactly the saved data; cases.json records the options and the
verdict. check_judged_cases.py then asks `zoobench same` the same questions.

Without torch._dynamo or timm (torch 1.13 here) --judge reimplementation builds the same kinds
of cases from torchvision models, with TorchScript freezing standing in for torch.compile and a
Python re-implementation of the rule as judge; every such case says so in cases.json. That mode
exists to test the file format and the checker, not zoobench's verdicts.

    python3 generate_judged_cases.py --out /tmp/judged            # GPU machine
    /usr/bin/python3 generate_judged_cases.py --out /tmp/judged --judge reimplementation --device cpu
"""

import argparse
import copy
import inspect
import json
import math
import os
import sys
import time

import torch

UPSTREAM = "torch._dynamo.utils.same"
REIMPLEMENTATION = "reimplementation (zoobench tests/gpu/accuracy, NOT upstream)"
OPTION_NAMES = ("tol", "cos_similarity", "equal_nan", "use_larger_multiplier_for_smaller_tensor",
                "use_iou_for_bool", "iou_threshold")


# ----------------------------------------------------------------------------------------------
# The judge
# ----------------------------------------------------------------------------------------------

def reimplemented_same(ref, res, fp64_ref=None, cos_similarity=False, tol=1e-4, equal_nan=False,
                       use_larger_multiplier_for_smaller_tensor=False, use_iou_for_bool=False,
                       iou_threshold=0.99):
    """The rule of torch._dynamo.utils.same, written out for torches that lack it (1.13).
    Only for exercising the pipeline: the real judge is upstream's function."""
    kwargs = dict(cos_similarity=cos_similarity, tol=tol, equal_nan=equal_nan,
                  use_larger_multiplier_for_smaller_tensor=use_larger_multiplier_for_smaller_tensor,
                  use_iou_for_bool=use_iou_for_bool, iou_threshold=iou_threshold)
    if fp64_ref is None:
        fp64_ref = ref
    if isinstance(ref, (list, tuple)):
        if not isinstance(res, (list, tuple)):
            raise AssertionError("type mismatch")
        if len(ref) != len(res):
            return False
        return all(reimplemented_same(a, b, c, **kwargs) for a, b, c in zip(ref, res, fp64_ref))
    if isinstance(ref, dict):
        if not isinstance(res, dict) or set(ref) != set(res):
            raise AssertionError("keys mismatch")
        return all(reimplemented_same(ref[k], res[k], fp64_ref[k], **kwargs) for k in sorted(ref))
    if isinstance(ref, (torch.Tensor, float)):
        ref, res, fp64_ref = (t if isinstance(t, torch.Tensor) else torch.tensor(t)
                              for t in (ref, res, fp64_ref))
        if ref.dtype != res.dtype:
            return False
        if ref.dtype == torch.bool:
            if use_iou_for_bool:
                inter = (ref & res).sum().float()
                union = (ref | res).sum().float()
                if union == 0:
                    return bool(inter == 0)
                return not (inter / union).item() < iou_threshold
            return torch.allclose(ref.to(torch.uint8), res.to(torch.uint8), atol=tol, rtol=tol,
                                  equal_nan=equal_nan)
        if cos_similarity:
            a = ref.flatten().to(torch.float32)
            b = res.flatten().to(torch.float32)
            if torch.allclose(a, b, atol=tol, rtol=tol, equal_nan=True):
                return True
            score = torch.nn.functional.cosine_similarity(a, b, dim=0, eps=1e-6)
            return bool(score >= 0.99)
        if torch.allclose(ref, res, atol=tol, rtol=tol, equal_nan=equal_nan):
            return True
        if fp64_ref.dtype != torch.float64:
            return False
        if (not fp64_ref.isnan().any() and not res.isnan().any() and ref.isnan().any()
                and torch.allclose(fp64_ref.to(res.dtype), res, atol=0.04, rtol=0.04,
                                   equal_nan=equal_nan)):
            return True
        ref_error = torch.sqrt(torch.mean(torch.square(fp64_ref - ref))).item()
        res_error = torch.sqrt(torch.mean(torch.square(fp64_ref - res))).item()
        multiplier = 3.0 if res.dtype in (torch.float16, torch.bfloat16) else 2.0
        n = fp64_ref.numel()
        if use_larger_multiplier_for_smaller_tensor and n <= 10:
            multiplier = 10.0
        elif use_larger_multiplier_for_smaller_tensor and n <= 500:
            multiplier = 8.0
        elif n < 1000 or (ref.ndim == 4 and ref.shape[-1] == ref.shape[-2] == 1) or tol >= 2e-2:
            multiplier = 3.0
        passes = res_error <= multiplier * ref_error + tol / 10.0
        if not passes and equal_nan and math.isnan(ref_error) and math.isnan(res_error):
            passes = True
        return passes
    if isinstance(ref, (str, int, type(None), bool, torch.device)):
        return ref == res
    raise RuntimeError(f"unsupported type: {type(ref).__name__}")


class Judge:
    def __init__(self, which):
        self.name = UPSTREAM
        if which in ("auto", "upstream"):
            try:
                from torch._dynamo.utils import same
                self.function = same
                self.accepted = set(inspect.signature(same).parameters)
                return
            except ImportError:
                if which == "upstream":
                    raise SystemExit("torch._dynamo.utils.same is not importable here; "
                                     "use --judge reimplementation to test the pipeline only")
        print(f"note: judging with the {REIMPLEMENTATION}", file=sys.stderr)
        self.name = REIMPLEMENTATION
        self.function = reimplemented_same
        self.accepted = set(inspect.signature(reimplemented_same).parameters)

    def supports(self, options):
        return all(k in self.accepted for k, v in options.items() if v not in (False, None))

    def __call__(self, ref, res, fp64, options):
        kwargs = {k: v for k, v in options.items() if k in self.accepted}
        try:
            return bool(self.function(ref, res, fp64, **kwargs)), None
        except Exception as e:  # upstream's harness counts an exception as a failed check
            return False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


# ----------------------------------------------------------------------------------------------
# Writing cases
# ----------------------------------------------------------------------------------------------

def to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, tuple):
        return tuple(to_cpu(v) for v in value)
    if isinstance(value, list):
        return [to_cpu(v) for v in value]
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    return value


def options(tol=1e-4, cos=False, equal_nan=False, larger=False, iou=False, iou_threshold=0.99):
    return {"tol": tol, "cos_similarity": cos, "equal_nan": equal_nan,
            "use_larger_multiplier_for_smaller_tensor": larger, "use_iou_for_bool": iou,
            "iou_threshold": iou_threshold}


class CaseWriter:
    def __init__(self, out, judge):
        self.out, self.judge, self.cases = out, judge, []

    def add(self, name, ref, res, fp64, option_sets, note=""):
        """Saves one (ref, res, fp64) triple and judges it under each option set."""
        folder = os.path.join(self.out, name)
        os.makedirs(folder, exist_ok=True)
        files = {}
        for role, value in (("ref", ref), ("res", res), ("fp64", fp64)):
            if role == "fp64" and value is None:
                files[role] = None
                continue
            path = os.path.join(folder, f"{role}.pt")
            torch.save(to_cpu(value), path)
            files[role] = os.path.relpath(path, self.out)
        # Judge exactly what the files hold, as zoobench will read them (CPU).
        loaded = {role: (torch.load(os.path.join(self.out, path)) if path else None)
                  for role, path in files.items()}
        for opts in option_sets:
            if not self.judge.supports(opts):
                print(f"skip {name} {opts}: this torch's same() lacks an option", file=sys.stderr)
                continue
            verdict, error = self.judge(loaded["ref"], loaded["res"], loaded["fp64"], opts)
            label = ",".join(f"{k}={v}" for k, v in opts.items()
                             if v != options()[k]) or "defaults"
            self.cases.append({"name": f"{name} [{label}]", "ref": files["ref"], "res": files["res"],
                               "fp64": files["fp64"], "options": opts, "expected": verdict,
                               "judge": self.judge.name, "judge_error": error, "note": note})

    def write(self, meta):
        with open(os.path.join(self.out, "cases.json"), "w") as f:
            json.dump({"format": "zoobench-judged-cases/1", **meta, "cases": self.cases}, f,
                      indent=1)


# ----------------------------------------------------------------------------------------------
# Models and the outputs they give
# ----------------------------------------------------------------------------------------------

def deterministic():
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def make_model(name, source, device, shape):
    """A randomly initialised model whose batch norms have seen data: with their initial
    statistics some random models (mobilenets) shrink every output to ~1e-10, below any
    tolerance, which would make every comparison pass."""
    torch.manual_seed(0)
    if source == "timm":
        import timm
        model = timm.create_model(name, pretrained=False)
    else:
        import torchvision
        model = getattr(torchvision.models, name)(num_classes=100)
    model = model.to(device).train()
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.momentum = None  # a plain average of what the calibration batches saw
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn((8,) + tuple(shape[1:]), device=device))
    for m, momentum in zip(norms, momenta):
        m.momentum = momentum
    return model


def compiled(model, example, upstream):
    """torch.compile on the GPU machine; without it, TorchScript freezing (which folds batch
    norms into convolutions, so numbers move a little, as with a real compiler)."""
    if upstream:
        torch._dynamo.reset()
        return torch.compile(model)
    # (Not optimize_for_inference: 1.13's MKLDNN rewrite computes mobilenet_v3_small wrongly.)
    return torch.jit.freeze(torch.jit.trace(model.eval(), example))


def run(model, x):
    torch.manual_seed(1)
    with torch.no_grad():
        return model(x)


def noisy(t, scale, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    noise = torch.randn(t.shape, generator=g, dtype=torch.float64).to(t.device)
    return (t.double() + noise * scale * t.double().std()).to(t.dtype)


def inference_cases(writer, name, source, device, shape, upstream, budget):
    model = make_model(name, source, device, shape).eval()
    torch.manual_seed(2)
    x = torch.randn(shape, device=device)
    golden = run(copy.deepcopy(model).double(), x.double())
    eager = run(model, x)
    eager_again = run(model, x)
    base = f"{name}/inference"
    tols = [options(tol=1e-4), options(tol=1e-3), options(tol=1e-2), options(tol=1e-2, cos=True)]

    writer.add(f"{base}/eager_vs_eager", eager, eager_again, golden, [options(tol=0.0)],
               "two eager runs must be bitwise equal")
    if not budget.left():
        print(f"skip {base}/compiled_fp32: compile budget spent", file=sys.stderr)
    else:
        start = time.time()
        try:
            res = run(compiled(model, x, upstream), x)
            writer.add(f"{base}/compiled_fp32", eager, res, golden, tols,
                       "eager vs compiled, float32")
        except Exception as e:
            print(f"skip {base}/compiled_fp32: {type(e).__name__}: {e}", file=sys.stderr)
        budget.spent(time.time() - start)
    for i, scale in enumerate((1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)):
        writer.add(f"{base}/noise_{scale:g}", eager, noisy(eager, scale, 10 + i), golden,
                   [options(tol=1e-4), options(tol=1e-3), options(tol=1e-2, cos=True)],
                   f"eager plus Gaussian noise of {scale:g} x std")
    try:
        model16 = copy.deepcopy(model).to(torch.bfloat16)
        eager16 = run(model16, x.to(torch.bfloat16))
        writer.add(f"{base}/bf16_vs_fp32", eager, eager16.float(), golden,
                   [options(tol=1e-4), options(tol=1e-2), options(tol=4e-2), options(tol=1e-2, cos=True)],
                   "a bfloat16 model's output (as float32) against float32 eager")
    except Exception as e:
        print(f"skip {base}/bf16_vs_fp32: {type(e).__name__}: {e}", file=sys.stderr)
    return eager, golden


def compiled_bf16_cases(writer, name, source, device, shape, upstream, budget):
    if not budget.left():
        print(f"skip {name}/inference/compiled_bf16: compile budget spent", file=sys.stderr)
        return
    model = make_model(name, source, device, shape).eval()
    torch.manual_seed(2)
    x = torch.randn(shape, device=device)
    golden = run(copy.deepcopy(model).double(), x.double())
    start = time.time()
    try:
        model16 = model.to(torch.bfloat16)
        x16 = x.to(torch.bfloat16)
        eager16 = run(model16, x16)
        res16 = run(compiled(model16, x16, upstream), x16)
        writer.add(f"{name}/inference/compiled_bf16", eager16, res16, golden,
                   [options(tol=1e-3), options(tol=1e-2), options(tol=4e-2)],
                   "bfloat16 eager vs bfloat16 compiled, float64 golden")
    except Exception as e:
        print(f"skip {name}/inference/compiled_bf16: {type(e).__name__}: {e}", file=sys.stderr)
    budget.spent(time.time() - start)


def structural_cases(writer, name, eager, golden):
    """Containers, dtypes, masks, NaNs, small tensors and scalars built from real outputs."""
    base = f"{name}/derived"
    logits, probs = eager, eager.softmax(-1)
    near = noisy(eager, 1e-4, 99)
    far = noisy(eager, 1e-2, 98)
    g = golden.float()
    writer.add(f"{base}/dict", {"logits": logits, "probs": probs},
               {"logits": near, "probs": near.softmax(-1)},
               {"logits": golden, "probs": golden.softmax(-1)},
               [options(tol=1e-4), options(tol=1e-3)])
    writer.add(f"{base}/dict_keys_differ", {"logits": logits, "probs": probs},
               {"logits": logits, "scores": probs}, None, [options()])
    writer.add(f"{base}/list_length_differs", [logits, probs], [logits], None, [options()])
    writer.add(f"{base}/dtype_differs", (logits,), (logits.half(),), None, [options()])
    writer.add(f"{base}/argmax_int64", (logits, logits.argmax(-1)), (far, far.argmax(-1)),
               (golden, golden.argmax(-1)), [options(tol=1e-2), options(tol=1e-1)])
    writer.add(f"{base}/masks", logits > 0, far > 0, None,
               [options(), options(iou=True), options(iou=True, iou_threshold=0.9),
                options(iou=True, iou_threshold=0.5)])
    writer.add(f"{base}/empty_masks", logits > 1e9, far > 1e9, None, [options(iou=True)])
    nan_ref = logits.clone()
    nan_ref.view(-1)[3] = float("nan")
    writer.add(f"{base}/nan_in_ref_only", nan_ref, near, golden,
               [options(), options(equal_nan=True)])
    nan_both = near.clone()
    nan_both.view(-1)[3] = float("nan")
    writer.add(f"{base}/nan_in_both", nan_ref, nan_both, golden,
               [options(), options(equal_nan=True)])
    for numel in (8, 300, 700):
        small = slice(0, numel)
        writer.add(f"{base}/small_{numel}", logits.reshape(-1)[small], far.reshape(-1)[small],
                   golden.reshape(-1)[small],
                   [options(tol=1e-3), options(tol=1e-3, larger=True), options(tol=2e-2)])
    pooled = lambda t: t.reshape(t.shape[0], -1, 1, 1)
    writer.add(f"{base}/one_by_one_4d", pooled(logits), pooled(far), pooled(golden),
               [options(tol=1e-3), options(tol=1e-2)])
    writer.add(f"{base}/python_scalars", (float(logits.mean()), 3, None, "x", True),
               (float(near.mean()), 3, None, "x", True), (float(golden.mean()), 3, None, "x", True),
               [options(), options(tol=1e-2)])
    writer.add(f"{base}/python_ints_differ", (float(logits.mean()), 3), (float(logits.mean()), 4),
               None, [options()])
    writer.add(f"{base}/fp32_golden_only", logits, far, g, [options(tol=1e-3)],
               "a float32 'golden' never brings the rmse rule")


def training_cases(writer, name, source, device, shape, upstream, budget):
    """Loss and gradients of one training step, eager vs compiled (or channels_last), fp64 golden."""
    if not budget.left():
        print(f"skip {name}/training: compile budget spent", file=sys.stderr)
        return

    def step(model, x):
        torch.manual_seed(3)
        model.zero_grad(set_to_none=True)
        out = model(x)
        loss = out.sum() / out.numel()  # upstream's reduce_to_scalar_loss for a tensor output
        loss.backward()
        # Name parameters after the module itself (torch.compile's wrapper adds "_orig_mod.").
        module = getattr(model, "_orig_mod", model)
        grads = {n: (p.grad if p.grad is not None else torch.zeros_like(p))
                 for n, p in module.named_parameters()}
        return {"loss": loss.detach(), "grads": grads}

    model = make_model(name, source, device, shape).train()
    torch.manual_seed(2)
    x = torch.randn(shape, device=device)
    golden = step(copy.deepcopy(model).double(), x.double())
    eager = step(model, x)
    start = time.time()
    try:
        if upstream:
            other = step(torch.compile(copy.deepcopy(model)), x)
            how = "compiled"
        else:
            other = step(copy.deepcopy(model).to(memory_format=torch.channels_last),
                         x.to(memory_format=torch.channels_last))
            how = "channels_last"
    except Exception as e:
        print(f"skip {name}/training: {type(e).__name__}: {e}", file=sys.stderr)
        return
    budget.spent(time.time() - start)
    base = f"{name}/training"
    writer.add(f"{base}/{how}", eager, other, golden,
               [options(tol=1e-4), options(tol=1e-3), options(tol=1e-2), options(tol=1e-2, cos=True)],
               f"loss and gradients, eager vs {how}")
    hurt = copy.deepcopy(eager)
    largest = max(hurt["grads"], key=lambda n: float(hurt["grads"][n].abs().max()))
    hurt["grads"][largest] = noisy(hurt["grads"][largest], 1e-1, 7)
    writer.add(f"{base}/one_gradient_perturbed", eager, hurt, golden,
               [options(tol=1e-4), options(tol=1e-3), options(tol=1e-2)],
               f"gradient {largest} plus noise of 10% of its spread")
    shifted = copy.deepcopy(eager)
    shifted["grads"][largest] = shifted["grads"][largest] + 1e-3
    writer.add(f"{base}/one_gradient_shifted", eager, shifted, golden,
               [options(tol=1e-4), options(tol=1e-2)], f"gradient {largest} plus 1e-3")


class Budget:
    """Compile time is the cost: stop compiling once this much has been spent."""

    def __init__(self, seconds):
        self.seconds, self.used = seconds, 0.0

    def left(self):
        return self.used < self.seconds

    def spent(self, seconds):
        self.used += seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for the cases (created)")
    parser.add_argument("--judge", choices=("auto", "upstream", "reimplementation"), default="auto")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--models", help="comma-separated model names (default: per mode)")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--compile-budget-s", type=float, default=60.0,
                        help="stop compiling new variants after this many seconds of compiling")
    parser.add_argument("--no-training", action="store_true")
    args = parser.parse_args()

    judge = Judge(args.judge)
    upstream = judge.name == UPSTREAM
    deterministic()
    if upstream:
        source, size = "timm", 224
        models = ["resnet18", "mobilenetv3_large_100", "deit_tiny_patch16_224"]
    else:
        source, size = "torchvision", 64
        models = ["resnet18", "mobilenet_v3_small"]
    if args.models:
        models = args.models.split(",")
    os.makedirs(args.out, exist_ok=True)
    writer = CaseWriter(args.out, judge)
    budget = Budget(args.compile_budget_s)
    started = time.time()
    shape = (args.batch, 3, size, size)
    # Compiles are what costs: every model's float32 one first, then bfloat16 and training for
    # the first model, as long as the budget lasts.
    for name in models:
        t0 = time.time()
        eager, golden = inference_cases(writer, name, source, args.device, shape, upstream, budget)
        structural_cases(writer, name, eager, golden)
        print(f"{name}: {time.time() - t0:.1f} s, {len(writer.cases)} cases so far", file=sys.stderr)
    compiled_bf16_cases(writer, models[0], source, args.device, shape, upstream, budget)
    if not args.no_training:
        training_cases(writer, models[0], source, args.device, shape, upstream, budget)

    versions = {"torch": torch.__version__}
    try:
        import timm
        versions["timm"] = timm.__version__
    except ImportError:
        versions["timm"] = None
    writer.write({"judge": judge.name, "device": args.device, "models": models, "source": source,
                  "versions": versions, "seconds": round(time.time() - started, 1)})
    passes = sum(c["expected"] for c in writer.cases)
    print(f"{len(writer.cases)} cases ({passes} same, {len(writer.cases) - passes} different) "
          f"judged by {judge.name} in {time.time() - started:.0f} s -> {args.out}/cases.json")


if __name__ == "__main__":
    main()
