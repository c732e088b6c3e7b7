"""manifest.json (format zoobench-manifest/1, docs/formats.md) and zoo/index.json, written
atomically; sha256 of artifacts; library versions."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import tempfile
from typing import Any, Dict, List, Optional

from . import EXPORTER_VERSION, zoo_lock

MANIFEST_FORMAT = "zoobench-manifest/1"
INDEX_FORMAT = "zoobench-index/1"


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json_atomically(path: str, obj: Any) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, sort_keys=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _version_of(distribution: str, module: str) -> Optional[str]:
    """A library's version without importing it where possible (importing transformers takes
    seconds); None when it is not installed."""
    try:
        from importlib import metadata

        return metadata.version(distribution)
    except Exception:  # noqa: BLE001 - PackageNotFoundError, or no metadata (Debian builds)
        pass
    try:
        import importlib

        return getattr(importlib.import_module(module), "__version__", None)
    except ImportError:
        return None


def library_versions() -> Dict[str, Optional[str]]:
    import torch

    return {
        "exporter": EXPORTER_VERSION,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torchvision": _version_of("torchvision", "torchvision"),
        "timm": _version_of("timm", "timm"),
        "transformers": _version_of("transformers", "transformers"),
    }


def artifact_entry(folder: str, filename: str, **fields: Any) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"path": filename, "sha256": sha256_file(os.path.join(folder, filename))}
    entry.update(fields)
    return entry


def build_manifest(*, name: str, suite: str, source: str, batch_size: int,
                   artifacts: Dict[str, Dict[str, Any]], inputs: Dict[str, Any],
                   output_names: Optional[List[str]], mutated_inputs: List[int],
                   loss: str, loss_scale: float, dropout: bool, deepcopy: bool,
                   versions: Dict[str, Optional[str]], extra: Dict[str, Any]) -> Dict[str, Any]:
    manifest: Dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "name": name,
        "suite": suite,
        "source": source,
        "batch_size": batch_size,
        "artifacts": artifacts,
        "inputs": inputs,
        "outputs": {"names": output_names or []},
        "mutated_inputs": mutated_inputs,
        "training": {"loss": loss, "loss_scale": loss_scale},
        "dropout": dropout,
        "deepcopy": deepcopy,
        "versions": versions,
        "exported_at": utc_now(),
    }
    manifest.update(extra)  # our extensions: batch_size_source, details, aoti_failures
    return manifest


def load_index(zoo: str) -> Dict[str, Any]:
    path = os.path.join(zoo, "index.json")
    if os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as f:
                index = json.load(f)
            if isinstance(index, dict) and isinstance(index.get("models"), list):
                return index
        except (OSError, ValueError):
            pass  # unreadable: start afresh, the manifests are the truth
    return {"format": INDEX_FORMAT, "models": []}


def record_in_index(zoo: str, entry: Dict[str, Any]) -> None:
    """Adds or replaces the (suite, name) entry; rewritten after every model so that an
    interrupted export keeps what it finished. Read and written under a lock (index.json.lock):
    the model processes of a run export their recipes side by side, and an unlocked
    read-modify-write would drop another's entry."""
    with zoo_lock.held_exclusively(os.path.join(zoo, "index.json.lock")):
        index = load_index(zoo)
        models = [m for m in index["models"]
                  if not (m.get("suite") == entry["suite"] and m.get("name") == entry["name"])]
        models.append(entry)
        models.sort(key=lambda m: (str(m.get("suite")), str(m.get("name"))))
        index["models"] = models
        index["format"] = INDEX_FORMAT
        index["updated_at"] = utc_now()
        write_json_atomically(os.path.join(zoo, "index.json"), index)
