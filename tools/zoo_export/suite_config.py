"""Suite lists and suite yaml: which models a suite has, their batch sizes, and what to skip.

A suite's files (`suites/<suite>_models_list.txt` in any of upstream's three list formats,
`suites/<suite>.yaml` in the schema of upstream's benchmarks/dynamo/torchbench.yaml) have one
reader, zoobench: the exporter asks it (`zoobench suite-config SUITE`, JSON) and gets the list's
models and the yaml's keys it uses (batch sizes, skip lists, canary and only_* lists,
accuracy.max_batch_size, scaled_compute_loss, zoobench.extra_models/image_size/skip_reasons/
run_despite_checkout_skip), every list of names flattened. So a yaml line means the same to the
harness and to the exporter, and a file zoobench refuses stops the exporter with zoobench's
words. The zoobench executable is $ZOOBENCH_BIN (zoobench sets it for the processes it starts),
else build/zoobench of this checkout, else the installed one beside these tools, else
`zoobench` on PATH.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional

# `--suite all` means upstream's three suites.
ALL_SUITES = ("torchbench", "huggingface", "timm_models")


class SuiteError(Exception):
    """A suite file is missing or malformed; the message names the file (and line)."""


@dataclass
class ListEntry:
    name: str
    batch_size: Optional[int]


def names_in(value: Any) -> List[str]:
    """The model names in a yaml value: lists (nested ones too, as upstream's anchors make them),
    mappings (their keys); `~` entries are ignored."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [str(k) for k in value.keys()]
    if isinstance(value, (list, tuple, set)):
        out: List[str] = []
        for item in value:
            out.extend(names_in(item))
        return out
    return []


def _dig(tree: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(tree, dict):
            return None
        tree = tree.get(key)
    return tree


def _unique_key_loader(yaml):
    """PyYAML's safe loader, refusing a mapping that repeats a key (PyYAML would keep the last
    one without a word), as zoobench refuses one in a suite yaml."""

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                first_line = {}
                for key_node, _ in node.value:
                    if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                        continue
                    key = key_node.value
                    if key in first_line:
                        raise yaml.constructor.ConstructorError(
                            None, None,
                            f"duplicate key '{key}' (first on line {first_line[key]}): readers "
                            "differ on which one counts (zoobench took the first, the exporter "
                            "the last); keep one",
                            key_node.start_mark)
                    first_line[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def load_yaml_file(path: str) -> Dict[str, Any]:
    """A yaml file zoobench does not read: upstream's own torchbench.yaml in a TorchBench
    checkout, whose metadata goes under the suite's (torchbench_checkout.read_metadata)."""
    try:
        import yaml  # PyYAML: Debian python3-yaml here; a dependency of timm/transformers there
    except ImportError:
        raise SuiteError(f"{path}: PyYAML is not installed for this python "
                         "(Debian: apt-get install python3-yaml; pip: pip install pyyaml)") from None
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.load(f, Loader=_unique_key_loader(yaml))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise SuiteError(f"{where}: {e.problem or e}") from None
    except yaml.YAMLError as e:
        raise SuiteError(f"{path}: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: expected a mapping at the top level")
    return data


def merge_under(base: Dict[str, Any], defaults: Dict[str, Any]) -> Dict[str, Any]:
    """`base` with `defaults` filled in where base has no value (mappings merged key by key,
    lists united). Used to put a TorchBench checkout's metadata under our suite yaml."""
    out = dict(defaults)
    for key, value in base.items():
        other = out.get(key)
        if isinstance(value, dict) and isinstance(other, dict):
            out[key] = merge_under(value, other)
        elif isinstance(value, list) and isinstance(other, list):
            out[key] = value + [v for v in other if v not in value]
        else:
            out[key] = value
    return out


def without_skips(config: Dict[str, Any], names: Iterable[str]) -> Dict[str, Any]:
    """`config` with `names` taken out of skip.all: our yaml's answer to a checkout's yaml that
    skips what we run (merge_under unites the two skip lists)."""
    names = set(names)
    skip = config.get("skip")
    if not names or not isinstance(skip, dict) or "all" not in skip:
        return config
    kept = [n for n in names_in(skip["all"]) if n not in names]
    return {**config, "skip": {**skip, "all": kept}}


@dataclass
class SuiteConfig:
    name: str
    entries: List[ListEntry] = field(default_factory=list)
    config: Dict[str, Any] = field(default_factory=dict)
    list_path: Optional[str] = None
    yaml_path: Optional[str] = None
    # where a TorchBench checkout's metadata (merged under `config`) came from, if any
    checkout_metadata: Optional[str] = None

    @classmethod
    def load(cls, suites_dir: str, name: str, require: bool = True) -> "SuiteConfig":
        """The suite as zoobench reads it; with require=False, a suite with neither file is an
        empty one (a model exported into `custom`)."""
        have_files = os.path.isfile(list_file(suites_dir, name)) or \
            os.path.isfile(os.path.join(suites_dir, f"{name}.yaml"))
        if not have_files and not require:
            return cls(name)
        return cls.from_reading(read_through_zoobench(suites_dir, name))

    @classmethod
    def from_reading(cls, reading: Dict[str, Any]) -> "SuiteConfig":
        """From `zoobench suite-config`'s JSON (format zoobench-suite/1)."""
        if reading.get("format") != "zoobench-suite/1":
            raise SuiteError(f"zoobench suite-config wrote format {reading.get('format')!r}, "
                             "expected zoobench-suite/1: the exporter and zoobench are of "
                             "different versions; build zoobench from this checkout")
        entries = [ListEntry(m["name"], m.get("batch_size")) for m in reading.get("models", [])]
        return cls(reading["suite"], entries, reading.get("config") or {},
                   reading.get("list"), reading.get("yaml"))

    # --- membership -------------------------------------------------------------------------
    def models(self) -> List[str]:
        """The list's models, then `zoobench.extra_models` (models a suite has beyond its
        upstream list, e.g. huggingface's AllenaiLongformerBase, as upstream's EXTRA_MODELS)."""
        names = [e.name for e in self.entries]
        for extra in self.names_at("zoobench", "extra_models"):
            if extra not in names:
                names.append(extra)
        return names

    def names_at(self, *keys: str) -> List[str]:
        return names_in(_dig(self.config, *keys))

    def value_at(self, *keys: str) -> Any:
        return _dig(self.config, *keys)

    # --- batch size ---------------------------------------------------------------------------
    def list_batch_size(self, name: str) -> Optional[int]:
        for e in self.entries:
            if e.name == name:
                return e.batch_size
        return None

    def yaml_batch_size(self, name: str, training: bool) -> Optional[int]:
        mode = "training" if training else "inference"
        table = _dig(self.config, "batch_size", mode)
        if isinstance(table, dict) and name in table and table[name] is not None:
            return int(table[name])
        return None

    def batch_size_divisor(self, name: str) -> int:
        table = _dig(self.config, "batch_size", "divisors")
        if isinstance(table, dict) and table.get(name):
            return int(table[name])
        return 1

    def dont_change_batch_size(self, name: str) -> bool:
        return name in self.names_at("dont_change_batch_size")

    def accuracy_max_batch_size(self, name: str) -> Optional[int]:
        table = _dig(self.config, "accuracy", "max_batch_size")
        if isinstance(table, dict) and table.get(name):
            return int(table[name])
        return None

    def resolve_batch_size(self, name: str, training: bool, cli_batch_size: Optional[int],
                           source_default: Optional[int], accuracy_batch: bool = False):
        """(batch size or None, where it came from). Precedence as upstream: --batch-size >
        the list's bs > yaml batch_size.<training|inference> > the source's default; upstream's
        batch_size.divisors divide anything but --batch-size; dont_change_batch_size models
        always get the source's default. accuracy_batch: the --batch-size is upstream's
        accuracy batch size, which accuracy.max_batch_size caps (torchbench.py's load_model)."""
        if self.dont_change_batch_size(name):
            note = "source default (dont_change_batch_size)"
            if cli_batch_size:
                note += f"; --batch-size {cli_batch_size} ignored"
            return source_default, note
        cap = self.accuracy_max_batch_size(name) if accuracy_batch else None
        if cli_batch_size and cap and cap < cli_batch_size:
            return cap, f"accuracy.max_batch_size of {self.name}.yaml (accuracy at {cli_batch_size})"
        if cli_batch_size:
            return cli_batch_size, "--batch-size"
        bs, origin = self.list_batch_size(name), f"{os.path.basename(self.list_path or 'list')}"
        if bs is None:
            bs = self.yaml_batch_size(name, training)
            origin = f"yaml batch_size.{'training' if training else 'inference'}"
        if bs is None:
            bs, origin = source_default, "source default"
        divisor = self.batch_size_divisor(name)
        if bs is not None and divisor > 1:
            bs, origin = max(bs // divisor, 1), f"{origin} / {divisor} (batch_size.divisors)"
        return bs, origin

    # --- other per-model facts --------------------------------------------------------------------
    def skip_reason(self, name: str, device: str) -> Optional[str]:
        why = _dig(self.config, "zoobench", "skip_reasons", name)
        if name in self.names_at("skip", "all"):
            return f"{self.name}.yaml skip.all" + (f": {why}" if why else "")
        if name in self.names_at("skip", "device", device):
            return f"{self.name}.yaml skip.device.{device}" + (f": {why}" if why else "")
        return None

    def inference_run_skip(self, name: str) -> Optional[str]:
        """Why `zoobench run` skips an exported model in inference without writing a row, in its
        own words (SuiteConfig::skip_reason in src/zoobench/zoo/suite_config.cpp)."""
        if name in self.names_at("skip", "test", "inference"):
            return f"skip.test.inference in {self.name}.yaml"
        if name in self.names_at("only_training"):
            return f"only_training in {self.name}.yaml (the model has only a train mode)"
        return None

    def loss_scale(self, name: str) -> float:
        # upstream timm_models.py divides the loss of `scaled_compute_loss` models by 1000
        return 1e-3 if name in self.names_at("scaled_compute_loss") else 1.0


def zoobench_binary() -> str:
    """The zoobench executable that reads suite files for the exporter."""
    given = os.environ.get("ZOOBENCH_BIN")
    if given:
        return given
    tools = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    built = os.path.join(os.path.dirname(tools), "build", "zoobench")  # a checkout's build
    # installed: PREFIX/share/zoobench/tools beside PREFIX/bin
    installed = os.path.join(tools, "..", "..", "..", "bin", "zoobench")
    for candidate in (built, installed):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    on_path = shutil.which("zoobench")
    if on_path:
        return on_path
    raise SuiteError("the exporter reads suite files through zoobench, which is not built here: "
                     f"run `make build` (it makes {built}), or set ZOOBENCH_BIN to a zoobench "
                     "executable")


# Readings already made in this process, by what they were read from: an export plans each
# model through several suites' files, and every zoobench start loads LibTorch (about a second).
_readings: Dict[tuple, Dict[str, Any]] = {}


def _file_state(path: str) -> Optional[tuple]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _contents(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def read_through_zoobench(suites_dir: str, suite: str) -> Dict[str, Any]:
    """`zoobench suite-config SUITE --suites-dir DIR`'s JSON; a file zoobench refuses raises
    SuiteError with zoobench's words (the file, its line and what to fix). The same files (by
    their contents) read by the same zoobench again in this process give the first reading (a
    copy) without starting zoobench again."""
    binary = zoobench_binary()
    files = (list_file(suites_dir, suite), os.path.join(suites_dir, f"{suite}.yaml"))
    key = (os.path.abspath(binary), _file_state(binary), os.path.abspath(suites_dir), suite) + \
        tuple((path, _contents(path)) for path in files)
    if key not in _readings:
        _readings[key] = _run_suite_config(binary, suites_dir, suite)
    return copy.deepcopy(_readings[key])


def _run_suite_config(binary: str, suites_dir: str, suite: str) -> Dict[str, Any]:
    # `--`: a suite named like a flag is still the suite
    command = [binary, "suite-config", "--suites-dir", suites_dir, "--", suite]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SuiteError(f"could not run {' '.join(command)}: {e}") from None
    if done.returncode != 0:
        words = done.stderr.strip()
        words = words[len("zoobench: "):] if words.startswith("zoobench: ") else words
        words = words or f"exit status {done.returncode}"
        if "unknown suite" in words:
            known = ", ".join(available_suites(suites_dir)) or "none"
            words += f" (suites in {suites_dir}: {known})"
        raise SuiteError(words)
    try:
        return json.loads(done.stdout)
    except ValueError as e:
        raise SuiteError(f"{' '.join(command)} wrote no JSON ({e}): {done.stdout[:200]!r}") \
            from None


def list_file(suites_dir: str, suite: str) -> str:
    """`<suite>_models_list.txt`; upstream's timm suite is `timm_models` with
    `timm_models_list.txt`, so a suite named `*_models` may also use `<suite>_list.txt`."""
    path = os.path.join(suites_dir, f"{suite}_models_list.txt")
    if not os.path.isfile(path) and suite.endswith("_models"):
        alternative = os.path.join(suites_dir, f"{suite}_list.txt")
        if os.path.isfile(alternative):
            return alternative
    return path


def available_suites(suites_dir: str) -> List[str]:
    found = set()
    if os.path.isdir(suites_dir):
        files = set(os.listdir(suites_dir))
        for f in files:
            if f.endswith(".yaml"):
                found.add(f[: -len(".yaml")])
        for f in files:
            if f.endswith("_models_list.txt"):
                base = f[: -len("_list.txt")]
                found.add(base if base in found else base[: -len("_models")])
    return sorted(found)


def matches(name: str, filters: Iterable[str], excludes: Iterable[str]) -> bool:
    """Upstream's -k/-x: case-insensitive regex search; any filter must match, no exclude may."""
    filters, excludes = list(filters), list(excludes)
    if filters and not any(re.search(f, name, re.IGNORECASE) for f in filters):
        return False
    return not any(re.search(x, name, re.IGNORECASE) for x in excludes)
