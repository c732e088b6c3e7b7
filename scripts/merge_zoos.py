#!/usr/bin/env python3
"""Merges zoos exported in parallel (one exporter process per zoo) into one zoo.

  merge_zoos.py TARGET PART...

A model that appears in several parts keeps its first export's files and gains the artifacts
(train.pt, AOTInductor packages) that only other parts made for it, when all parts traced it
with the same inputs. The parts' index.json files are merged
(an exported entry wins over a failed one).
"""
import json
import os
import shutil
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save(obj, path):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def link_or_copy(src, dst):
    """A hard link where the filesystem allows one: a zoo's models are gigabytes each, and a copy
    of every part filled the GPU machine's disk (2026-12-02). The exporters never rewrite a file
    they finished, so the part and the merged zoo can share it."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def main(target, parts):
    entries = {}
    for root in parts:
        for suite in sorted(os.listdir(root)):
            if not os.path.isdir(os.path.join(root, suite)):
                continue
            for model in sorted(os.listdir(os.path.join(root, suite))):
                src, dst = os.path.join(root, suite, model), os.path.join(target, suite, model)
                if not os.path.exists(os.path.join(src, "manifest.json")):
                    continue
                if not os.path.exists(dst):
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copytree(src, dst, copy_function=link_or_copy)
                    continue
                ours, theirs = load(os.path.join(dst, "manifest.json")), load(os.path.join(src, "manifest.json"))
                # A package is only valid beside the TorchScript it was exported with: same seed,
                # same inputs. Different inputs mean a different export; keep them apart.
                if ours["inputs"]["sha256"] != theirs["inputs"]["sha256"]:
                    print(f"not merging {suite}/{model} from {root}: its inputs differ from the first export's")
                    continue
                # Union of the artifacts: one part may have traced train.pt, another built the
                # AOTInductor packages of the same model.
                for role, artifact in theirs["artifacts"].items():
                    if role not in ours["artifacts"]:
                        link_or_copy(os.path.join(src, artifact["path"]), os.path.join(dst, artifact["path"]))
                        ours["artifacts"][role] = artifact
                save(ours, os.path.join(dst, "manifest.json"))
        index = os.path.join(root, "index.json")
        if os.path.exists(index):
            for entry in load(index).get("models", []):
                key = (entry.get("suite"), entry.get("name"))
                if entry.get("status") == "exported" or key not in entries:
                    entries[key] = entry
    os.makedirs(target, exist_ok=True)
    save({"format": "zoobench-index/1", "models": list(entries.values())}, os.path.join(target, "index.json"))
    exported = [e for e in entries.values() if e.get("status") == "exported"]
    failed = [e for e in entries.values() if e.get("status") == "failed"]
    print(f"merged zoo {target}: {len(exported)} exported, {len(failed)} failed")
    for e in failed:
        print(f"  failed: {e.get('suite')}/{e.get('name')}: {str(e.get('reason'))[:300]}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
