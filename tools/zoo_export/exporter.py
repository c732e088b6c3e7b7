"""The export: which models (the plan), then one model at a time into zoo/<suite>/<model>/, a
progress line each, failures recorded with their reason and skipped, a summary at the end."""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import re
import shutil
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from zoo_compile import device_gate

from . import aoti_export, manifest, sources, torchscript_export, training_step, zoo_lock
from .model_bundle import (SEED, ExportableModel, SourceUnavailable, disable_dropout,
                           flatten_outputs, seed_everything)
from .sources import torchbench_checkout, user_torchscript
from .suite_config import ALL_SUITES, SuiteConfig, matches, merge_under, without_skips


@dataclass
class ExportOptions:
    zoo: str = "zoo"
    suites_dir: str = "suites"
    # Suites as zoobench read them ({suite: `zoobench suite-config`'s JSON}), handed over by a
    # zoobench process exporting in itself; any other suite is asked of zoobench.
    suite_readings: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    device: str = "cpu"
    training: bool = False
    batch_size: Optional[int] = None
    # batch_size is upstream's accuracy batch size (zoobench run's accuracy pass): the suite's
    # accuracy.max_batch_size caps it per model, as torchbench.py's load_model does.
    accuracy_batch: bool = False
    seq_len: Optional[int] = None
    image_size: Optional[int] = None
    aoti: bool = False
    aoti_dtypes: List[str] = field(default_factory=lambda: ["float32"])
    aoti_devices: List[str] = field(default_factory=list)
    int32_inputs: bool = False
    aoti_options: Dict[str, Any] = field(default_factory=dict)  # inductor_configs
    aoti_numerics: str = "performance"  # aoti_export.NUMERICS
    torchbench_dir: Optional[str] = None
    # transformers' attention: None is "eager" (plain ops every LibTorch traces and runs) when
    # tracing, the library's default when writing a recipe (what upstream's harness builds: the
    # torch.compile backends then compile the same attention as upstream's, e.g. SDPA).
    hf_attn_implementation: Optional[str] = None
    no_skip: bool = False
    skip_exported: bool = False
    check: bool = True
    # False (--no-torchscript): no eval.pt/train.pt, only the recipe (manifest `rebuild`) and the
    # inputs: what the torch.compile family needs when its eager reference is the Python module.
    torchscript: bool = True
    # zoobench's device gate (--device-gate): held shared while a model is built, run, traced
    # and saved, so that no export runs beside a timed section of the run's models.
    device_gate: Optional[str] = None
    # Called with (planned, bundle, folder) once a model is in place: a model's own process that
    # exported its recipe keeps the built module to run it (in_process.py), not building it again.
    keep_build: Optional[Callable[[Any, ExportableModel, str], None]] = None
    verbose: bool = False
    # A model whose export ran out of CUDA memory is exported again, up to this many times,
    # once the GPU has memory free: exporters beside each other on one GPU (and a run beside
    # them) each hold tens of GB for minutes, and on the H200 (2026-12-03c) two models failed
    # that way although each fits alone.
    oom_retries: int = 2
    oom_wait_s: float = 300.0


@dataclass
class PlannedModel:
    suite: str
    name: str
    source: Any = None                 # a sources.* module, or None when unresolvable
    source_name: str = ""              # the name that source knows the model by
    source_label: str = ""
    batch_size: Optional[int] = None
    batch_size_origin: str = ""
    skip_reason: Optional[str] = None
    problem: Optional[str] = None      # why it cannot be built (becomes the failure reason)
    loss_scale: float = 1.0
    image_size: Optional[int] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    user: Optional[Dict[str, Any]] = None  # --from-torchscript


@dataclass
class Outcome:
    model: PlannedModel
    status: str                        # exported | failed | skipped | kept (--skip-exported)
    reason: Optional[str] = None
    seconds: float = 0.0
    files: Dict[str, int] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    # {role: why} for the AOTInductor packages that could not be made (as in the manifest), so
    # that the zoo's index says it in a field and not only in a note's words
    aoti_failures: Dict[str, str] = field(default_factory=dict)
    # Seconds per stage of export_one ("building the model": 3.2, ...): where an export's time
    # goes (on the H200 a 2 MB model took 60 s with its package, and only the total was known).
    stage_seconds: Dict[str, float] = field(default_factory=dict)
    # The export, or one of its packages, failed for want of CUDA memory: worth a retry.
    out_of_memory: bool = False


class _StageClock:
    """Adds the time since the last call to the stage that was running."""

    def __init__(self, seconds: Dict[str, float]):
        self.seconds = seconds
        self.stage: Optional[str] = None
        self.since = time.monotonic()

    def enter(self, stage: str) -> None:
        self.stop()
        self.stage = stage

    def stop(self) -> None:
        now = time.monotonic()
        if self.stage is not None:
            self.seconds[self.stage] = self.seconds.get(self.stage, 0.0) + now - self.since
        self.stage, self.since = None, now


# --- plan ---------------------------------------------------------------------------------------

def load_suites(options: ExportOptions, suite: str) -> List[SuiteConfig]:
    names = list(ALL_SUITES) if suite == "all" else [suite]
    configs = []
    for name in names:
        cfg = _load_suite(options, name, require=(suite != "custom"))
        if name == "torchbench" and options.torchbench_dir:
            metadata, layout = torchbench_checkout.read_metadata(options.torchbench_dir)
            cfg.config = without_skips(merge_under(cfg.config, metadata),
                                       cfg.names_at("zoobench", "run_despite_checkout_skip"))
            cfg.checkout_metadata = layout
        configs.append(cfg)
    return configs


def _load_suite(options: ExportOptions, name: str, require: bool) -> SuiteConfig:
    if name in options.suite_readings:
        return SuiteConfig.from_reading(options.suite_readings[name])
    return SuiteConfig.load(options.suites_dir, name, require=require)


def _plan_one(cfg: SuiteConfig, name: str, options: ExportOptions, explicit: bool) -> PlannedModel:
    planned = PlannedModel(suite=cfg.name, name=name.split(":", 1)[-1])
    source, resolved = sources.resolve(name, cfg.name, options.torchbench_dir)
    if source is None:
        planned.problem = resolved
        planned.source_label = "?"
    else:
        planned.source, planned.source_name = source, resolved
        planned.source_label = source.label(resolved)
        default = source.default_batch_size(resolved, training=options.training)
        planned.batch_size, planned.batch_size_origin = cfg.resolve_batch_size(
            planned.name, options.training, options.batch_size, default,
            accuracy_batch=options.accuracy_batch)
        if source is not torchbench_checkout and planned.batch_size is None:
            planned.batch_size, planned.batch_size_origin = default, "source default"
    if not explicit and not options.no_skip:
        planned.skip_reason = cfg.skip_reason(planned.name, options.device) or \
            _canary_skip_reason(cfg, planned, options)
    planned.loss_scale = cfg.loss_scale(planned.name)
    suite_image_size = cfg.value_at("zoobench", "image_size")
    planned.image_size = options.image_size or (int(suite_image_size) if suite_image_size
                                                else None)
    if source is torchbench_checkout and cfg.checkout_metadata:
        planned.metadata["torchbench_metadata"] = cfg.checkout_metadata
    return planned


def _canary_skip_reason(cfg: SuiteConfig, planned: PlannedModel,
                        options: ExportOptions) -> Optional[str]:
    if (planned.source is torchbench_checkout and options.torchbench_dir
            and torchbench_checkout.is_canary(options.torchbench_dir, planned.name)
            and planned.name not in cfg.names_at("canary_models")):
        return (f"canary model (torchbenchmark/canary_models): exported only with --only "
                f"{planned.name} or when {cfg.name}.yaml canary_models names it")
    return None


def plan(options: ExportOptions, suite: str, only: Optional[str], filters: List[str],
         excludes: List[str]) -> List[PlannedModel]:
    """The models to export, in suite then list order. `--only NAME` takes NAME from the suites
    it is in; a name in no list, or one with a source prefix (timm:NAME), is exported into the
    named suite (`custom` under --suite all) when a source knows it."""
    configs = load_suites(options, suite) if suite != "custom" else []
    planned: List[PlannedModel] = []
    if only:
        if ":" not in only:
            for cfg in configs:
                if only in cfg.models():
                    planned.append(_plan_one(cfg, only, options, explicit=True))
        if not planned:
            if suite == "all":
                cfg = SuiteConfig("custom")
            elif configs:
                cfg = configs[0]
            else:
                cfg = _load_suite(options, suite, require=False)
            planned.append(_plan_one(cfg, only, options, explicit=True))
        return planned
    for cfg in configs:
        for name in cfg.models():
            if matches(name, filters, excludes):
                planned.append(_plan_one(cfg, name, options, explicit=False))
    return planned


def plan_user_model(options: ExportOptions, suite: str, name: str, script_path: str,
                    inputs_path: str, mutated_inputs: List[int]) -> PlannedModel:
    return PlannedModel(suite=suite, name=name, source=user_torchscript, source_name=name,
                        source_label=user_torchscript.label(script_path),
                        batch_size=options.batch_size, batch_size_origin="inputs",
                        user={"script": script_path, "inputs": inputs_path,
                              "mutated_inputs": mutated_inputs})


def availability(planned: PlannedModel) -> Optional[str]:
    if planned.problem:
        return planned.problem
    if planned.source is not None and planned.source is not user_torchscript:
        return planned.source.unavailable_reason()
    return None


# --- export -------------------------------------------------------------------------------------

def _first_line(e: BaseException) -> str:
    """The error's first line, and its second where the first only announces it ("Error(s) in
    loading state_dict for Model:" says nothing of which keys)."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    if line.endswith(":") and len(lines) > 1:
        line = f"{line} {lines[1]}"[:400]
    if isinstance(e, SourceUnavailable):
        return line or type(e).__name__
    return f"{type(e).__name__}: {line}" if line else type(e).__name__


def _build(planned: PlannedModel, options: ExportOptions) -> ExportableModel:
    if planned.user is not None:
        return user_torchscript.build(planned.user["script"], planned.user["inputs"],
                                      planned.batch_size, planned.user["mutated_inputs"])
    seed_everything()
    return planned.source.build(planned.source_name, _build_context(planned, options))


def _build_context(planned: PlannedModel, options: ExportOptions) -> sources.BuildContext:
    return sources.BuildContext(
        batch_size=planned.batch_size, device=options.device, training=options.training,
        seq_len=options.seq_len, image_size=planned.image_size, loss_scale=planned.loss_scale,
        torchbench_dir=options.torchbench_dir,
        hf_attn_implementation=hf_attn_implementation(options))


def hf_attn_implementation(options: ExportOptions) -> str:
    if options.hf_attn_implementation:
        return options.hf_attn_implementation
    return "eager" if options.torchscript else "default"


def rebuild_record(planned: PlannedModel, options: ExportOptions,
                   bundle: ExportableModel) -> Optional[Dict[str, Any]]:
    """What the torch.compile backends need to build the same Python module again (manifest
    `rebuild`): the source, the name it knows the model by, the build context and the seed.
    None for a user's TorchScript file, which has no Python source."""
    module_name = getattr(planned.source, "__name__", None)
    if planned.user is not None or module_name is None:
        return None  # no Python source (a user's file, or a stand-in source in a test)
    ctx = _build_context(planned, options)
    context = {k: v for k, v in vars(ctx).items() if k != "options"}
    context["batch_size"] = bundle.batch_size
    prefix = "zoo_export.sources."
    source = module_name[len(prefix):] if module_name.startswith(prefix) else module_name
    return {"source": source, "name": planned.source_name,
            "context": context, "seed": SEED, "keep_dropout": bool(bundle.keep_dropout)}


def _run_once(bundle: ExportableModel, inputs, verbose: bool):
    """A recipe export's one eager run (eval mode, on clones): the outputs name the manifest's
    outputs, and the inputs it wrote into are the manifest's mutated inputs."""
    if bundle.method == "user":
        raise SourceUnavailable("a user's TorchScript file has no recipe: export it without "
                                "--no-torchscript")
    return torchscript_export.reference_run(bundle.module, inputs, grad=False, verbose=verbose)


def _size(path: str) -> int:
    return os.path.getsize(path) if os.path.exists(path) else 0


def _prepare(bundle: ExportableModel, options: ExportOptions) -> Tuple[torch.Tensor, ...]:
    """Moves the modules to the device; returns the inputs on the device. What is traced or
    compiled here (TorchScript, AOTInductor) has its dropout set to 0 unless the model keeps it.
    A recipe alone keeps the model's dropout as built: the process that runs it sets it to 0
    where the module trains (zoo_compile.session), and in eval mode dropout does nothing."""
    if bundle.method != "user":
        zero_dropout = not bundle.keep_dropout and (options.torchscript or options.aoti)
        modules = {id(m): m for m in (bundle.module, bundle.train_module) if m is not None}
        for m in modules.values():
            m.to(options.device)
            if zero_dropout:
                disable_dropout(m)
    return tuple(t.to(options.device) for t in bundle.inputs)


def _torchscript_fields(device: str, method: str, check) -> Dict[str, Any]:
    fields: Dict[str, Any] = {"kind": "torchscript", "traced_on": device, "method": method}
    if check:
        fields["check"] = check.to_json()
    return fields


def is_out_of_memory(error: BaseException) -> bool:
    """A CUDA allocation failed (PyTorch's OutOfMemoryError, or its message wrapped in
    another error by a library or the TorchScript interpreter)."""
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(error, oom)) or "CUDA out of memory" in str(error)


def _export_aoti_packages(bundle: ExportableModel, folder: str, options: ExportOptions,
                          artifacts: Dict[str, Dict[str, Any]], outcome: Outcome) -> Dict[str, str]:
    """Adds aoti.<dtype>.<device> artifacts; returns {role: why not} for those that failed.
    A package that cannot be made never fails the model: its TorchScript stands."""
    failures: Dict[str, str] = {}
    unsupported = aoti_export.unsupported_reason()
    if bundle.method == "user":
        unsupported = "a user TorchScript file has no Python module to torch.export"
    for role, make in _aoti_jobs(bundle, options):
        if unsupported:
            failures[role] = unsupported
            continue
        try:
            entry = make(folder, f"{role}.pt2")
            artifacts[role] = manifest.artifact_entry(folder, f"{role}.pt2", **entry)
        except Exception as e:  # noqa: BLE001
            failures[role] = _first_line(e)
            outcome.out_of_memory |= is_out_of_memory(e)
            if options.verbose:
                traceback.print_exc()
        finally:
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    return failures


def _aoti_roles(options: ExportOptions) -> List[Tuple[str, str, Optional[str]]]:
    """(role, device, dtype) of each package the options ask for: aoti.<dtype>.<device> per
    dtype, and with --training aoti_train.float32.<device> (dtype None), the whole training step
    (training_step.py)."""
    roles: List[Tuple[str, str, Optional[str]]] = []
    for device in options.aoti_devices or [options.device]:
        roles += [(f"aoti.{dtype}.{device}", device, dtype) for dtype in options.aoti_dtypes]
        if options.training:
            roles.append((f"aoti_train.float32.{device}", device, None))
    return roles


def _aoti_jobs(bundle: ExportableModel, options: ExportOptions):
    """(role, make(folder, filename) -> manifest fields) for each of _aoti_roles."""
    return [(role, functools.partial(_inference_package, bundle, options, device, dtype)
             if dtype else functools.partial(_training_package, bundle, options, device))
            for role, device, dtype in _aoti_roles(options)]


def _inference_package(bundle: ExportableModel, options: ExportOptions, device: str,
                       dtype: str, folder: str, filename: str) -> Dict[str, Any]:
    return aoti_export.export_package(
        bundle.module, bundle.inputs, bundle.input_specs, folder, device, dtype,
        options.int32_inputs, options.verbose, options.aoti_options, options.aoti_numerics)


def _training_package(bundle: ExportableModel, options: ExportOptions, device: str,
                      folder: str, filename: str) -> Dict[str, Any]:
    from zoo_compile.session import training_loss  # the one Python definition of the loss rules

    module = bundle.train_module or bundle.module
    inputs = [t.to(device) for t in bundle.inputs]
    original_device = next((p.device for p in module.parameters()), torch.device(device))

    def compile_package(program, path: str) -> None:
        import torch._inductor
        with aoti_export.compile_numerics(options.aoti_numerics, device):
            torch._inductor.aoti_compile_and_package(
                program, package_path=path, inductor_configs=options.aoti_options or None)

    try:
        module.to(device).train()
        with torchscript_export.quiet_warnings(options.verbose):
            return training_step.export_step_package(
                module, inputs, lambda outputs: training_loss(outputs, bundle.loss,
                                                              bundle.loss_scale),
                folder, filename, bundle.keep_dropout, compile_package)
    finally:
        module.eval().to(original_device)


# Work folders live three levels down (zoo/.staging/<suite>/<model>) so that nothing scanning
# zoo/<suite>/<model>/ ever takes a half-written export for a model.
STAGING = ".staging"


def _staging_dir(zoo: str, suite: str, name: str, what: str) -> str:
    """<model>.<pid>.<what>: each process's own, so that two exporters of one model (zoo_lock.py)
    never remove each other's work."""
    return os.path.join(zoo, STAGING, suite, f"{name}.{os.getpid()}.{what}")


def _make_staging(staging: str, attempts: int = 5) -> None:
    """A fresh staging folder. Another exporter's _remove_empty_staging may remove the empty
    folders above it between makedirs' steps (FileNotFoundError): make them again."""
    shutil.rmtree(staging, ignore_errors=True)
    for attempt in range(attempts):
        try:
            os.makedirs(staging)
            return
        except FileNotFoundError:
            if attempt == attempts - 1:
                raise


def _remove_empty_staging(zoo: str, suite: str) -> None:
    """Removes .staging/<suite> and .staging when empty. Safe beside other exporters: rmdir
    never removes a folder with anything in it, so never one holding a model's staging folder
    (and _make_staging makes again what it removed under another's makedirs)."""
    for folder in (os.path.join(zoo, STAGING, suite), os.path.join(zoo, STAGING)):
        try:
            os.rmdir(folder)
        except OSError:
            pass  # not empty (another model's work) or already gone


def _remove_dead_staging(zoo: str, suite: str, name: str) -> None:
    """Removes the model's staging folders left by processes that died. Called under the model's
    export lock: a live exporter of the model would hold it, so a folder of another id is a
    leftover. The id is checked all the same, so that a live process's folder is never removed
    whatever the lock says (flock on a network filesystem shared by several machines)."""
    folder = os.path.join(zoo, STAGING, suite)
    pattern = re.compile(re.escape(name) + r"\.(\d+)\.(partial|old)")
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match and not zoo_lock.process_alive(int(match.group(1))):
            shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)


def _move_into_place(staging: str, final_dir: str, old: str) -> None:
    shutil.rmtree(old, ignore_errors=True)
    os.makedirs(os.path.dirname(final_dir), exist_ok=True)
    if os.path.exists(final_dir):
        os.replace(final_dir, old)
    os.replace(staging, final_dir)
    shutil.rmtree(old, ignore_errors=True)


def _run_or_trace(bundle: ExportableModel, staging: str, options: ExportOptions,
                  clock: _StageClock) -> Tuple[Any, List[int], Dict[str, Dict[str, Any]]]:
    """export_one's first steps on the device: the recipe's one run, or eval.pt (and train.pt)
    traced and saved into staging. Returns the reference outputs, the mutated inputs and the
    TorchScript artifacts' manifest entries."""
    device = options.device
    inputs = _prepare(bundle, options)
    if not options.torchscript:
        clock.enter("running the model once")
        reference, mutated = _run_once(bundle, inputs, options.verbose)
        return reference, mutated, {}
    clock.enter("making eval.pt")
    reference, mutated, check = torchscript_export.export_eval(
        bundle, inputs, staging, device, options.verbose, options.check)
    artifacts = {"eval": manifest.artifact_entry(
        staging, "eval.pt", **_torchscript_fields(device, bundle.method, check))}
    if options.training:
        clock.enter("making train.pt")
        check = torchscript_export.export_train(bundle, inputs, staging, device,
                                                options.verbose, options.check)
        artifacts["train"] = manifest.artifact_entry(
            staging, "train.pt", **_torchscript_fields(device, bundle.method, check))
    return reference, mutated, artifacts


def _add_aoti_packages(bundle: ExportableModel, staging: str, options: ExportOptions,
                       artifacts: Dict[str, Dict[str, Any]], outcome: Outcome) -> Dict[str, str]:
    """export_one's AOTInductor step: the packages into `artifacts`, what became of them into
    the outcome's notes; returns {role: why not} for those that failed."""
    if torch.cuda.is_available():
        # What the checks cached goes back before minutes of compiling, for the
        # exporters and runs beside this one on the GPU.
        torch.cuda.empty_cache()
    aoti_failures = _export_aoti_packages(bundle, staging, options, artifacts, outcome)
    outcome.aoti_failures = dict(aoti_failures)
    outcome.notes += [f"no {role}: {why}" for role, why in aoti_failures.items()]
    outcome.notes += [f"{role}: {adaptation}" for role, entry in artifacts.items()
                      for adaptation in entry.get("adaptations") or []]
    outcome.notes += [f"{role} compile phases (nested): " +
                      ", ".join(f"{name} {seconds:.1f}s" for name, seconds in phases.items())
                      for role, entry in artifacts.items()
                      for phases in [entry.get("compile_phases_s")] if phases]
    return aoti_failures


def _manifest_extra(planned: PlannedModel, options: ExportOptions, bundle: ExportableModel,
                    aoti_failures: Dict[str, str]) -> Dict[str, Any]:
    """The manifest's keys beyond upstream's (docs/formats.md): batch_size_source, details,
    aoti_failures, int32_inputs, rebuild."""
    extra: Dict[str, Any] = {"batch_size_source": planned.batch_size_origin}
    details = {**bundle.details, **planned.metadata}
    if details:
        extra["details"] = details
    if aoti_failures:
        extra["aoti_failures"] = aoti_failures
    if options.aoti and options.int32_inputs:
        extra["int32_inputs"] = True
    rebuild = rebuild_record(planned, options, bundle)
    if rebuild:
        extra["rebuild"] = rebuild
    return extra


def export_one(planned: PlannedModel, options: ExportOptions, versions: Dict[str, Any]) -> Outcome:
    """Exports into a staging folder and moves it into place only when everything worked, so a
    failed re-export leaves the previous export (if any) intact."""
    outcome = Outcome(planned, "failed")
    final_dir = os.path.join(options.zoo, planned.suite, planned.name)
    staging = _staging_dir(options.zoo, planned.suite, planned.name, "partial")
    clock = _StageClock(outcome.stage_seconds)
    clock.enter("building the model")
    bundle = None
    try:
        if planned.problem:
            raise SourceUnavailable(planned.problem)
        _make_staging(staging)
        bundle = _build(planned, options)
        reference, mutated, artifacts = _run_or_trace(bundle, staging, options, clock)

        clock.enter("saving inputs.pt")
        torch.save(tuple(t.detach().cpu() for t in bundle.inputs),
                   os.path.join(staging, "inputs.pt"))
        inputs_entry = manifest.artifact_entry(
            staging, "inputs.pt", spec=[s.to_json() for s in bundle.input_specs])

        aoti_failures: Dict[str, str] = {}
        if options.aoti:
            clock.enter("making AOTInductor packages")
            aoti_failures = _add_aoti_packages(bundle, staging, options, artifacts, outcome)

        clock.enter("writing manifest.json")
        output_names = bundle.output_names or getattr(bundle.module, "output_names", None)
        if not output_names and reference is not None:
            output_names = [n for n, _ in flatten_outputs(reference)]
        doc = manifest.build_manifest(
            name=planned.name, suite=planned.suite, source=bundle.source,
            batch_size=bundle.batch_size, artifacts=artifacts, inputs=inputs_entry,
            output_names=output_names, mutated_inputs=mutated, loss=bundle.loss,
            loss_scale=bundle.loss_scale, dropout=bool(bundle.keep_dropout and options.training),
            deepcopy=bundle.deepcopy, versions=versions,
            extra=_manifest_extra(planned, options, bundle, aoti_failures))
        manifest.write_json_atomically(os.path.join(staging, "manifest.json"), doc)

        clock.enter("moving the export into place")
        _move_into_place(staging, final_dir,
                         _staging_dir(options.zoo, planned.suite, planned.name, "old"))
        outcome.status = "exported"
        outcome.files = {f: _size(os.path.join(final_dir, f)) for f in sorted(os.listdir(final_dir))}
        planned.batch_size = bundle.batch_size
        if options.keep_build is not None:
            options.keep_build(planned, bundle, final_dir)
    except KeyboardInterrupt:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    except Exception as e:  # noqa: BLE001 - one model's failure never stops the export
        outcome.out_of_memory |= is_out_of_memory(e)
        outcome.reason = _first_line(e) if isinstance(e, SourceUnavailable) else \
            f"{clock.stage}: {_first_line(e)}"
        if options.verbose and not isinstance(e, SourceUnavailable):
            traceback.print_exc()
        shutil.rmtree(staging, ignore_errors=True)
        if os.path.exists(os.path.join(final_dir, "manifest.json")):
            outcome.notes.append("the previous export in the zoo is kept")
    finally:
        clock.stop()
        _remove_empty_staging(options.zoo, planned.suite)
        del bundle
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return outcome


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def progress_line(index: int, total: int, outcome: Outcome) -> str:
    head = f"[{index}/{total}] {outcome.model.suite}/{outcome.model.name}"
    if outcome.status in ("skipped", "kept"):
        return f"{head}: {outcome.status} ({outcome.reason})"
    if outcome.status == "failed":
        return f"{head}: FAILED in {outcome.seconds:.1f}s: {outcome.reason}"
    files = ", ".join(f"{f} {_mb(n)}" for f, n in outcome.files.items() if f != "manifest.json")
    line = (f"{head}: exported in {outcome.seconds:.1f}s (batch {outcome.model.batch_size}, "
            f"{outcome.model.source_label}; {files})")
    if outcome.stage_seconds:
        line += "\n    took: " + ", ".join(f"{stage} {seconds:.1f}s" for stage, seconds
                                           in outcome.stage_seconds.items())
    for note in outcome.notes:
        line += f"\n    note: {note}"
    return line


def wanted_artifacts(options: ExportOptions) -> List[str]:
    """The artifact roles an export with these options writes (aoti ones may be recorded as
    failures instead); none for a recipe export."""
    if not options.torchscript:
        return []
    roles = ["eval"] + (["train"] if options.training else [])
    if options.aoti:
        roles += [role for role, _, _ in _aoti_roles(options)]
    return roles


def _manifest_path(planned: PlannedModel, options: ExportOptions) -> str:
    return os.path.join(options.zoo, planned.suite, planned.name, "manifest.json")


def _read_manifest(planned: PlannedModel, options: ExportOptions) -> Optional[Dict[str, Any]]:
    try:
        with open(_manifest_path(planned, options), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def already_exported(planned: PlannedModel, options: ExportOptions,
                     doc: Optional[Dict[str, Any]] = None) -> bool:
    """--skip-exported: the zoo has this model with every artifact this run would write (or,
    for an AOTInductor package, the recorded reason why it could not be made), traced on the
    same device. Lets an interrupted export of a whole list continue where it stopped. `doc`:
    the model's manifest where the caller has read it."""
    doc = doc if doc is not None else _read_manifest(planned, options)
    if doc is None:
        return False
    artifacts = doc.get("artifacts") or {}
    failures = doc.get("aoti_failures") or {}
    if not options.torchscript:
        context = (doc.get("rebuild") or {}).get("context") or {}
        return bool(doc.get("rebuild")) and bool(context.get("training")) == options.training
    if (artifacts.get("eval") or {}).get("traced_on") != options.device:
        return False
    return all(role in artifacts or role in failures for role in wanted_artifacts(options))


def _manifest_stamp(planned: PlannedModel, options: ExportOptions) -> Optional[Tuple[int, int]]:
    """Which manifest.json the model's folder holds (inode, mtime): every export writes a new one
    and moves a new folder into place, so a different stamp means another export finished."""
    try:
        info = os.stat(_manifest_path(planned, options))
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns


def _finished_meanwhile(planned: PlannedModel, options: ExportOptions,
                        stamp_before: Optional[Tuple[int, int]]) -> bool:
    """Whether another process exported this model while this one waited for its export lock,
    and its export serves this request: the manifest changed, has the batch size asked for (any,
    where the source picks it), every role this export would write (already_exported) and each
    file it names. A manifest that did not change is exported again, as asked: only a wait
    behind another exporter makes this one redundant."""
    if _manifest_stamp(planned, options) in (None, stamp_before):
        return False
    doc = _read_manifest(planned, options)
    if doc is None or not already_exported(planned, options, doc):
        return False
    if planned.batch_size is not None and doc.get("batch_size") != planned.batch_size:
        return False
    folder = os.path.dirname(_manifest_path(planned, options))
    entries = list((doc.get("artifacts") or {}).values()) + [doc.get("inputs") or {}]
    return all(isinstance(e, dict) and isinstance(e.get("path"), str)
               and os.path.isfile(os.path.join(folder, e["path"])) for e in entries)


def _source_scope(planned: PlannedModel):
    """A source whose models change process state or need stand-ins (a TorchBench checkout)
    offers scope(): held around the model's whole export, so that tracing and the checks run
    with what the build had, and nothing leaks into the next model."""
    scope = getattr(planned.source, "scope", None) if planned.user is None else None
    return scope() if scope is not None else contextlib.nullcontext()


_SIZE_UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_SIZE = r"([0-9.]+) (bytes|KiB|MiB|GiB|TiB)"


def memory_needed(message: str) -> Optional[int]:
    """The bytes an export that ran out of CUDA memory needed at least, read from PyTorch's
    message: what the process had allocated when it failed plus the allocation that failed.
    None when the message does not say (a wrapped or shortened one)."""
    tried = re.search(r"Tried to allocate " + _SIZE, message)
    if tried is None:
        return None
    held = re.search(_SIZE + r" is allocated by PyTorch", message)
    return sum(int(float(m.group(1)) * _SIZE_UNITS[m.group(2)]) for m in (tried, held) if m)


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def device_memory(device: str) -> Optional[int]:
    """The CUDA device's memory in bytes; None for a CPU export."""
    if not device.startswith("cuda") or not torch.cuda.is_available():
        return None
    return torch.cuda.mem_get_info(torch.device(device))[1]


def free_memory_wanted(total: int, needed: Optional[int], free_fraction: float = 0.25) -> int:
    """What a retry waits to see free: what the failed export needed where its message said so
    (most of it is its own, given back when it failed, so this waits for the others' too), and
    at least a share of the device for an export whose need is not known."""
    return max(int(free_fraction * total), needed or 0)


def wait_for_device_memory(device: str, wanted: Optional[int], timeout_s: float,
                           poll_s: float = 5.0) -> float:
    """Waits until `wanted` bytes (free_memory_wanted) are free on the CUDA device (what other
    processes held was given back) or timeout_s passed; returns the seconds waited. A CPU
    export (wanted None) returns at once. (export_one has given back this process's own cached
    memory when it returned.)"""
    if wanted is None:
        return 0.0
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if torch.cuda.mem_get_info(torch.device(device))[0] >= wanted:
            break
        time.sleep(poll_s)
    return time.monotonic() - start


def use_expandable_segments(device: str) -> Optional[str]:
    """Lets PyTorch's CUDA allocator grow segments instead of finding a new one in a piece: a
    model at a list's batch size makes its reference and checks in one process, and
    BlenderbotSmallForCausalLM (batch 256) failed three times to find 36.8 GiB in a piece while
    35.5 GiB sat reserved and unused (2026-12-03d). Left alone where PYTORCH_CUDA_ALLOC_CONF
    says otherwise. Returns a note for the log, or None."""
    if not device.startswith("cuda") or "PYTORCH_CUDA_ALLOC_CONF" in os.environ:
        return None
    settings = getattr(torch.cuda.memory, "_set_allocator_settings", None)
    if settings is None:
        return "this torch's CUDA allocator has no expandable segments"
    try:
        settings("expandable_segments:True")
    except Exception as e:  # noqa: BLE001  (a private call: an export never fails for it)
        return f"CUDA allocator's expandable segments not set: {_first_line(e)}"
    return None


def _export_retrying(p: PlannedModel, options: ExportOptions, versions: Dict[str, Any],
                     emit: Callable[[str], None]) -> Outcome:
    """export_one, and again (up to options.oom_retries times) after running out of CUDA
    memory, once the memory it needed is free."""
    with _source_scope(p), device_gate.shared_hold(options.device_gate):
        outcome = export_one(p, options, versions)
    for attempt in range(1, options.oom_retries + 1):
        if not outcome.out_of_memory:
            break
        why = outcome.reason or "; ".join(outcome.aoti_failures.values())
        needed, device_total = memory_needed(why), device_memory(options.device)
        if needed and device_total and needed > device_total:
            outcome.notes.append(
                f"not exported again: it needed at least {gib(needed)} (what it held "
                f"and what it asked for), more than the GPU's {gib(device_total)}; "
                f"export it with a smaller --batch-size")
            break
        wanted = free_memory_wanted(device_total, needed) if device_total else None
        emit(f"    {p.suite}/{p.name}: out of CUDA memory ({why}); waiting for "
             f"{gib(wanted) if wanted else 'the GPU'} to be free, then export "
             f"{attempt + 1} of {options.oom_retries + 1}")
        waited = wait_for_device_memory(options.device, wanted, options.oom_wait_s)
        with _source_scope(p), device_gate.shared_hold(options.device_gate):
            outcome = export_one(p, options, versions)
        outcome.notes.append(f"exported again after running out of CUDA memory ({why}), "
                             f"{waited:.0f}s later (export {attempt + 1})")
    return outcome


def export_and_record(p: PlannedModel, options: ExportOptions, versions: Dict[str, Any],
                      emit: Callable[[str], None] = print) -> Outcome:
    """One planned model: skipped, kept (--skip-exported, or exported by another process while
    this one waited for the model's export lock) or exported, its outcome recorded in the zoo's
    index.json."""
    if p.skip_reason:
        return Outcome(p, "skipped", p.skip_reason)
    if options.skip_exported and already_exported(p, options):
        return Outcome(p, "kept", "already in the zoo (--skip-exported)")
    stamp = _manifest_stamp(p, options)
    # The whole export, its index entry included, under the model's export lock (zoo_lock.py):
    # two processes exporting one model into one zoo otherwise undo each other's work.
    with zoo_lock.export_lock(options.zoo, p.suite, p.name, emit):
        if _finished_meanwhile(p, options, stamp):
            # Reported as --skip-exported reports a model in the zoo; the index keeps the
            # other process's entry.
            return Outcome(p, "kept", "already exported by another process")
        _remove_dead_staging(options.zoo, p.suite, p.name)
        start = time.monotonic()  # the export's time, not the wait's
        outcome = _export_retrying(p, options, versions, emit)
        outcome.seconds = time.monotonic() - start
        manifest.record_in_index(options.zoo, _index_entry(p, outcome))
    return outcome


def _index_entry(p: PlannedModel, outcome: Outcome) -> Dict[str, Any]:
    """The model's entry in zoo/index.json (docs/formats.md)."""
    entry = {"name": p.name, "suite": p.suite, "status": outcome.status,
             "reason": outcome.reason, "source": p.source_label,
             "batch_size": p.batch_size, "duration_s": round(outcome.seconds, 3),
             "stage_s": {k: round(v, 3) for k, v in outcome.stage_seconds.items()},
             "exported_at": manifest.utc_now()}
    if outcome.status == "exported":
        entry["manifest"] = f"{p.suite}/{p.name}/manifest.json"
    if outcome.notes:
        entry["notes"] = outcome.notes
    if outcome.aoti_failures:
        entry["aoti_failures"] = outcome.aoti_failures
    return entry


def export_all(planned: List[PlannedModel], options: ExportOptions,
               emit: Callable[[str], None] = print) -> List[Outcome]:
    versions = manifest.library_versions()
    outcomes: List[Outcome] = []
    os.makedirs(options.zoo, exist_ok=True)
    allocator_note = use_expandable_segments(options.device)
    if allocator_note:
        emit(f"note: {allocator_note}")
    for i, p in enumerate(planned, start=1):
        outcome = export_and_record(p, options, versions, emit)
        outcomes.append(outcome)
        emit(progress_line(i, len(planned), outcome))
        sys.stdout.flush()
    return outcomes


def summary(outcomes: List[Outcome], seconds: float, zoo: str) -> str:
    exported = [o for o in outcomes if o.status == "exported"]
    failed = [o for o in outcomes if o.status == "failed"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    kept = [o for o in outcomes if o.status == "kept"]
    size = sum(sum(o.files.values()) for o in exported)
    counts = f"exported {len(exported)}, failed {len(failed)}, skipped {len(skipped)}"
    if kept:
        counts += f", kept {len(kept)} (exported before)"
    lines = [f"{counts} (of {len(outcomes)}) in {seconds:.1f}s; {_mb(size)} written to {zoo}/ "
             f"(index: {os.path.join(zoo, 'index.json')})"]
    if failed:
        lines.append("failed (recorded in the index, status failed):")
        lines += [f"  {o.model.suite}/{o.model.name}: {o.reason}" for o in failed]
    if skipped:
        lines.append("skipped (suite yaml; --only NAME or --no-skip exports them anyway):")
        lines += [f"  {o.model.suite}/{o.model.name}: {o.reason}" for o in skipped]
    return "\n".join(lines)
