"""A model's recipe exported by the model's own zoobench process.

When every backend of a run is of the torch.compile family, a model needs no TorchScript: its
zoo entry is its recipe (how to build it) and its inputs. Exporting that in a process of its own
and then building the model again in the model's process cost a Python start and a second build
per model and batch size (on an H100, 9-16 s per export, one at a time ahead of four pipelines,
2026-12-05). So the model's process exports it itself, the exporter's own code writing the same
entry and index record, and keeps the module it built for the run (zoo_compile.rebuild).
"""

from __future__ import annotations

import sys
from typing import Any, Dict

from zoo_compile import rebuild

from . import exporter, manifest


def export_recipe(config: Dict[str, Any]) -> Dict[str, Any]:
    """config: zoo, suites_dir, suite, name, device, training, batch_size (or None),
    accuracy_batch (exporter.ExportOptions'), torchbench_dir (or None), suite_reading (the
    suite as zoobench read it, or None: then it is asked of zoobench). Returns status
    (exported | failed), reason, seconds, stage_s."""
    device = config["device"]
    options = exporter.ExportOptions(
        zoo=config["zoo"], suites_dir=config["suites_dir"], device=device,
        training=bool(config.get("training", False)), batch_size=config.get("batch_size"),
        accuracy_batch=bool(config.get("accuracy_batch", False)),
        torchbench_dir=config.get("torchbench_dir"), torchscript=False,
        suite_readings=({config["suite"]: config["suite_reading"]}
                        if config.get("suite_reading") else {}),
        # The run's gate is held by this process already; a run sets its own retries.
        oom_retries=0)

    def keep(planned, bundle, folder: str) -> None:
        rebuild.remember_recipe_build(f"{folder}/manifest.json", device, bundle.module,
                                      bundle.train_module, bool(bundle.keep_dropout))

    options.keep_build = keep
    planned = exporter.plan(options, config["suite"], config["name"], [], [])
    outcome = exporter.export_and_record(planned[0], options, manifest.library_versions(),
                                         emit=lambda line: print(line, file=sys.stderr))
    print(exporter.progress_line(1, 1, outcome), file=sys.stderr, flush=True)
    # "kept": another process exported the model while this one waited for its export lock
    # (zoo_lock.py); for zoobench the recipe is there, as if this process had written it.
    status = "exported" if outcome.status == "kept" else outcome.status
    return {"status": status, "reason": outcome.reason or "",
            "seconds": outcome.seconds, "stage_s": outcome.stage_seconds}
