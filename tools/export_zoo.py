#!/usr/bin/env python3
"""Export zoobench's model zoo: TorchScript (eval.pt, train.pt), AOTInductor packages, the exact
inputs and a manifest per model, from torchvision, timm, transformers, a BERT-style text
encoder made of torch.nn modules, a TorchBench checkout, or a user's TorchScript file.

Run it with a python that has torch (here /usr/bin/python3; on the GPU machine python3):

  tools/export_zoo.py --suite demo --training           the CPU demo list (suites/demo_*)
  tools/export_zoo.py --suite all --list                what `all` would export, and from where
  tools/export_zoo.py --suite timm_models --device cuda --aoti --bfloat16
  tools/export_zoo.py --suite huggingface --only BertForMaskedLM --aoti --int32-inputs
  tools/export_zoo.py --suite torchbench --torchbench-dir ~/benchmark -k resnet
  tools/export_zoo.py --from-torchscript m.pt --inputs in.pt --name broken_relu

Output (docs/formats.md): zoo/<suite>/<model>/{manifest.json,eval.pt,train.pt,inputs.pt,
aoti.<dtype>.<device>.pt2} and zoo/index.json, which lists every model tried with status
exported|failed and the reason. One model failing never stops the export; the exit status is
0 when at least one model was exported, 1 when none was, 2 for a usage error.

Suites: suites/<suite>_models_list.txt (`name bs`, `name,bs` or `name`) and suites/<suite>.yaml
(upstream's benchmarks/dynamo schema; ours under `zoobench:`). `--suite all` is torchbench,
huggingface and timm_models. Models in the yaml's skip.all / skip.device.<device> are skipped
unless named with --only or --no-skip is given; so are a TorchBench checkout's canary models
unless the yaml's canary_models names them. --skip-exported continues an interrupted export.
Batch size: --batch-size > the list's bs >
yaml batch_size.<training|inference> > the source's default; upstream's batch_size.divisors
apply to all but --batch-size.

Sources, by name: torchvision (alexnet, densenet121, mnasnet1_0, mobilenet_v2,
mobilenet_v3_large, resnet18/50/152, resnext50_32x4d, shufflenet_v2_x1_0, squeezenet1_1,
vgg16, vision_maskrcnn; at TorchBench's batch sizes), text encoder (text_encoder_bert,
text_encoder_bert_dropout, text_encoder_small), transformers (class names such as
BertForMaskedLM, and AllenaiLongformerBase, T5Small, DistillGPT2, GoogleFnet, YituTechConvBert,
Reformer), timm (any name in the timm_models suite), TorchBench names built offline with
TorchBench's architecture, batch sizes and inputs (timm_*, hf_*, basic_gnn_* through timm,
transformers, torch_geometric; pytorch_stargan, Super_SloMo, functorch_maml_omniglot from the
checkout's code with synthetic inputs), a TorchBench checkout (other torchbench names; what it
changes process-wide is put back after each model). A prefix forces a source: --only
timm:resnet50, hf:BertForMaskedLM, torchvision:resnet18, torchbench:hf_Bert.

Models get random weights from a fixed seed and nothing is downloaded (HF_HUB_OFFLINE=1,
pretrained=False). Dropout probabilities are set to 0 (manifest "dropout": false) except in
text_encoder_bert_dropout. Tracing bakes device constants into the graph: the manifest records
the device as `traced_on`. Each saved eval.pt/train.pt is loaded back and run on the saved
inputs against the Python model (--no-check skips that); a --from-torchscript module is never
run. Every artifact's sha256 is in the manifest.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TOOLS_DIR)
sys.path.insert(0, TOOLS_DIR)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="export_zoo.py", description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection_args(parser.add_argument_group("what to export"))
    add_how_args(parser.add_argument_group("how"))
    add_aoti_args(parser.add_argument_group("AOTInductor packages (torch >= 2.6)"))
    add_user_model_args(parser.add_argument_group("a user's TorchScript model"))
    args = parser.parse_args(argv)
    check_args(parser, args)
    return args


def add_selection_args(select) -> None:
    select.add_argument("--suite", default="all",
                        help="suite name (suites/<suite>_models_list.txt, suites/<suite>.yaml) "
                             "or `all` (torchbench, huggingface, timm_models); default all")
    select.add_argument("--only", metavar="NAME", help="just this model (exact name)")
    select.add_argument("-k", "--filter", action="append", default=[], metavar="REGEX",
                        help="models whose name matches (case-insensitive search; repeatable)")
    select.add_argument("-x", "--exclude", action="append", default=[], metavar="REGEX",
                        help="leave out models whose name matches (repeatable)")
    select.add_argument("--no-skip", action="store_true",
                        help="export models the suite yaml skips (skip.all, skip.device.<dev>)")
    select.add_argument("--skip-exported", action="store_true",
                        help="leave out models the zoo already has with every artifact this run "
                             "would write (continues an interrupted export)")
    select.add_argument("--list", action="store_true",
                        help="print what would be exported and from which source, and stop")


def add_how_args(how) -> None:
    how.add_argument("--zoo", default="zoo", metavar="DIR",
                     help="output folder (default zoo/, as zoobench run's --zoo)")
    how.add_argument("--suites-dir", default=os.path.join(REPO_ROOT, "suites"), metavar="DIR",
                     help="where the suite lists and yaml are (default: the repository's suites/)")
    how.add_argument("--batch-size", type=int, metavar="N", help="batch size for every model")
    how.add_argument("--accuracy-batch", action="store_true",
                     help="--batch-size is upstream's accuracy batch size: the suite yaml's "
                          "accuracy.max_batch_size caps it per model, as upstream's harness does "
                          "(zoobench run's accuracy pass asks for this)")
    how.add_argument("--seq-len", type=int, metavar="N",
                     help="sequence length of text models (default: upstream's per model)")
    how.add_argument("--image-size", type=int, metavar="N",
                     help="image side of the torchvision classifiers (default: the suite "
                          "yaml's zoobench.image_size, else 224)")
    how.add_argument("--training", action="store_true",
                     help="build the models for training (training inputs and, unless "
                          "--no-torchscript, train.pt)")
    how.add_argument("--no-torchscript", action="store_true",
                     help="trace nothing: write each model's recipe (how to build it again) and "
                          "its inputs, all that the torch.compile backends need when their eager "
                          "reference is the Python module (zoobench run does this for a run whose "
                          "backends are all of the torch.compile family)")
    how.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                     help="device the models are traced on (recorded as traced_on); default cpu")
    how.add_argument("--torchbench-dir", metavar="DIR",
                     help="a TorchBench checkout (pytorch/benchmark) for the torchbench models "
                          "that are not built in; its metadata is read from either layout")
    how.add_argument("--hf-attn-implementation", choices=["eager", "sdpa", "default"],
                     help="transformers attention implementation (default: eager, plain ops "
                          "that trace and run on every LibTorch; with --no-torchscript the "
                          "library's default, as upstream's harness builds the model)")
    how.add_argument("--no-check", action="store_true",
                     help="do not run eval.pt/train.pt against the Python model after saving "
                          "(faster; for models whose forward is not deterministic)")
    how.add_argument("--oom-retries", type=int, default=2, metavar="N",
                     help="export a model that ran out of CUDA memory again, up to N times, "
                          "each once what it needed (PyTorch's message says) or a quarter of "
                          "the GPU is free, or after --oom-wait seconds; never when it needed "
                          "more than the GPU has (default 2: exporters and runs beside each "
                          "other share the GPU)")
    how.add_argument("--oom-wait", type=float, default=300.0, metavar="SECONDS",
                     help="the longest wait for free CUDA memory before a retry (default 300)")
    how.add_argument("-v", "--verbose", action="store_true",
                     help="show warnings from tracing and tracebacks of failures")
    how.add_argument("--device-gate", metavar="PATH",
                     help="zoobench's device gate: hold it shared while each model is built, "
                          "run and saved (zoobench run passes it, so that no export runs beside "
                          "a timed section)")


def add_aoti_args(aoti) -> None:
    aoti.add_argument("--aoti", action="store_true",
                      help="also write aoti.<dtype>.<device>.pt2 (torch.export + "
                           "aoti_compile_and_package), float32 always; with --training also "
                           "aoti_train.float32.<device>.pt2, the whole training step")
    aoti.add_argument("--float16", action="store_true", help="also a float16 package")
    aoti.add_argument("--bfloat16", action="store_true", help="also a bfloat16 package")
    aoti.add_argument("--aoti-device", action="append", choices=["cpu", "cuda"], default=[],
                      help="device(s) to compile packages for (default: --device; repeatable)")
    aoti.add_argument("--int32-inputs", action="store_true",
                      help="packages take int32 where the model takes int64 (cast back inside); "
                           "the manifest records the input_contract")
    aoti.add_argument("--aoti-options", metavar="JSON", default="",
                      help="torch._inductor.config settings the packages are compiled with "
                           "(aoti_compile_and_package's inductor_configs), e.g. "
                           "'{\"pattern_matcher\": false}': what `zoobench bisect` cannot turn "
                           "off in a package; the manifest records them")
    aoti.add_argument("--aoti-numerics", choices=["performance", "default"], default="performance",
                      help="float32 switches a CUDA package is compiled under: `performance` "
                           "(default) those of zoobench's timed runs and of torch.compile there, "
                           "TF32 and cuDNN benchmark on, so that Inductor's timed choices (GEMM "
                           "padding) are made for them; `default` the process's own; recorded "
                           "in the manifest")


def add_user_model_args(user) -> None:
    user.add_argument("--from-torchscript", metavar="FILE",
                      help="add this TorchScript module to the zoo as it is, never run here "
                           "(needs --inputs, --name; suite `custom` unless --suite names one)")
    user.add_argument("--inputs", metavar="FILE",
                      help="torch.save'd tuple of tensors: forward's positional arguments")
    user.add_argument("--name", help="the model's name in the zoo")
    user.add_argument("--mutated-inputs", default="", metavar="I,J",
                      help="indices of inputs the model writes into")


def check_args(parser, args) -> None:
    """What argparse cannot check; parser.error (exit 2) names the flag."""
    if args.from_torchscript:
        missing = [f for f, v in (("--inputs", args.inputs), ("--name", args.name)) if not v]
        if missing:
            parser.error(f"--from-torchscript needs {' and '.join(missing)}")
        if args.suite == "all":
            args.suite = "custom"
        if not all(c.isalnum() or c in "._-" for c in args.name):
            parser.error(f"--name {args.name!r}: use letters, digits, '.', '_' and '-'")
    elif args.inputs or args.name:
        parser.error("--inputs and --name go with --from-torchscript")
    if args.batch_size is not None and args.batch_size <= 0:
        parser.error("--batch-size must be positive")
    if args.seq_len is not None and args.seq_len <= 0:
        parser.error("--seq-len must be positive")
    if args.image_size is not None and args.image_size < 32:
        parser.error("--image-size must be at least 32")
    if args.oom_retries < 0 or args.oom_wait < 0:
        parser.error("--oom-retries and --oom-wait cannot be negative")
    if (args.float16 or args.bfloat16 or args.int32_inputs or args.aoti_device
            or args.aoti_options) and not args.aoti:
        parser.error("--float16, --bfloat16, --int32-inputs, --aoti-device and --aoti-options "
                     "go with --aoti")
    try:
        args.aoti_options = json.loads(args.aoti_options) if args.aoti_options else {}
    except ValueError as e:
        parser.error(f"--aoti-options is not JSON: {e}")
    if not isinstance(args.aoti_options, dict):
        parser.error("--aoti-options must be a JSON object of torch._inductor.config keys, "
                     "e.g. '{\"max_autotune\": true}'")
    try:
        args.mutated_inputs = [int(i) for i in args.mutated_inputs.split(",") if i.strip()]
    except ValueError:
        parser.error(f"--mutated-inputs {args.mutated_inputs!r}: comma-separated indices")


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    problem = usage_problem(args)
    if problem:
        print(f"export_zoo: {problem}", file=sys.stderr)
        return 2
    import torch

    from zoo_export import exporter
    from zoo_export.suite_config import SuiteError

    dtypes = ["float32"] + (["float16"] if args.float16 else []) + \
        (["bfloat16"] if args.bfloat16 else [])
    options = export_options(args, exporter, dtypes)
    try:
        if args.from_torchscript:
            planned = [exporter.plan_user_model(options, args.suite, args.name,
                                                args.from_torchscript, args.inputs,
                                                args.mutated_inputs)]
        else:
            planned = exporter.plan(options, args.suite, args.only, args.filter, args.exclude)
    except SuiteError as e:
        print(f"export_zoo: {e}", file=sys.stderr)
        return 2
    if not planned:
        print(f"export_zoo: no model of suite {args.suite!r} matches "
              f"(-k {args.filter or '-'}, -x {args.exclude or '-'})", file=sys.stderr)
        return 2
    if args.list:
        print_plan(planned, exporter)
        return 0

    print(f"exporting {len(planned)} model(s) to {args.zoo}/ with torch {torch.__version__} "
          f"({sys.executable}), "
          f"{'recipes only (nothing traced)' if args.no_torchscript else 'traced on ' + args.device}"
          f"{', for training' if args.no_torchscript and args.training else ''}"
          f"{', with train.pt' if args.training and not args.no_torchscript else ''}"
          f"{', AOTInductor ' + '/'.join(dtypes) if args.aoti else ''}")
    return export(planned, options, exporter, args.zoo)


def usage_problem(args):
    """Why these arguments cannot run here (exit 2), or None."""
    import re

    for pattern in args.filter + args.exclude:
        try:
            re.compile(pattern)
        except re.error as e:
            return f"bad regular expression {pattern!r}: {e}"
    if args.no_torchscript and (args.aoti or args.from_torchscript):
        return ("--no-torchscript writes only recipes; --aoti packages and --from-torchscript "
                "files are made from a traced model")
    if args.torchbench_dir and not os.path.isdir(os.path.join(args.torchbench_dir,
                                                              "torchbenchmark")):
        return (f"--torchbench-dir {args.torchbench_dir} has no torchbenchmark/ folder "
                "(expected a checkout of pytorch/benchmark)")
    if args.device == "cuda" or "cuda" in args.aoti_device:
        import torch

        if not torch.cuda.is_available():
            return (f"--device/--aoti-device cuda, but torch {torch.__version__} of "
                    f"{sys.executable} sees no CUDA device; use --device cpu")
    return None


def export_options(args, exporter, dtypes):
    return exporter.ExportOptions(
        zoo=args.zoo, suites_dir=args.suites_dir, device=args.device, training=args.training,
        batch_size=args.batch_size, accuracy_batch=args.accuracy_batch, seq_len=args.seq_len,
        image_size=args.image_size, aoti=args.aoti, aoti_dtypes=dtypes,
        aoti_devices=args.aoti_device, int32_inputs=args.int32_inputs,
        aoti_options=args.aoti_options, aoti_numerics=args.aoti_numerics,
        torchbench_dir=args.torchbench_dir, hf_attn_implementation=args.hf_attn_implementation,
        no_skip=args.no_skip, skip_exported=args.skip_exported, check=not args.no_check,
        oom_retries=args.oom_retries, oom_wait_s=args.oom_wait,
        torchscript=not args.no_torchscript, device_gate=args.device_gate,
        verbose=args.verbose)


def export(planned, options, exporter, zoo: str) -> int:
    """Exports the planned models; 0 when one was exported (or kept), else 1."""
    start = time.monotonic()
    try:
        outcomes = exporter.export_all(planned, options)
    except KeyboardInterrupt:
        print("export_zoo: interrupted; models finished so far are in the zoo and its index",
              file=sys.stderr)
        return 130
    print(exporter.summary(outcomes, time.monotonic() - start, zoo))
    if any(o.status in ("exported", "kept") for o in outcomes):
        return 0
    if all(o.status == "skipped" for o in outcomes):
        print("export_zoo: every selected model is skipped by its suite yaml", file=sys.stderr)
        return 1
    print("export_zoo: no model was exported", file=sys.stderr)
    return 1


def print_plan(planned, exporter) -> None:
    rows = []
    for p in planned:
        problem = exporter.availability(p)
        if p.skip_reason:
            status = f"skip: {p.skip_reason}"
        elif problem:
            status = f"cannot: {problem}"
        else:
            status = "export"
        bs = "model default" if p.batch_size is None else str(p.batch_size)
        rows.append((f"{p.suite}/{p.name}", bs, p.batch_size_origin or "-", p.source_label,
                     status))
    header = ("model", "batch", "batch from", "source", "status")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    print(fmt.format(*header))
    for r in rows:
        print(fmt.format(*r))
    counts = {}
    for r in rows:
        key = r[4].split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    sys.exit(main())
