"""Suite lists and suite yaml: which models a suite has, their batch sizes, and what to skip.

Lists (`suites/<suite>_models_list.txt`) come in upstream's three formats and any list may mix
them: `name bs` (timm), `name,bs` (huggingface), `name` (torchbench). The yaml
(`suites/<suite>.yaml`) has the schema of upstream's benchmarks/dynamo/torchbench.yaml; our own
keys live under `zoobench:` (`extra_models`, `image_size` and `skip_reasons` are the exporter's; `patches`,
`training_patches`, `use_iou_for_bool`, `tolerance_overrides`, `switches_off` are the harness's).
"""

from __future__ import annotations

import os
import re
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
    line: int


def name_problem(name: str) -> Optional[str]:
    """Why `name` cannot be a model's name, which becomes one component of a path (zoo/<suite>/
    <name>/, <name>.partial): the same rule as zoobench's (util/text.h name_problem)."""
    if name in (".", ".."):
        return f"it is {name!r}"
    if len(name.encode()) > 200:
        return "it is longer than 200 characters"
    if "/" in name or "\\" in name:
        return "it holds a path separator"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "it holds a control character"
    return None


def parse_models_list(text: str, path: str = "<list>") -> List[ListEntry]:
    """Parses a models list; `#` starts a comment. A later line for the same name wins."""
    entries: Dict[str, ListEntry] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "," in line:
            fields = [f.strip() for f in line.split(",")]
        else:
            fields = line.split()
        if len(fields) > 2 or not fields[0]:
            raise SuiteError(
                f"{path}:{number}: expected `name`, `name bs` or `name,bs`, got {raw.strip()!r}")
        problem = name_problem(fields[0])
        if problem:
            raise SuiteError(f"{path}:{number}: {fields[0]!r} cannot be a model's name: {problem}")
        batch_size = None
        if len(fields) == 2 and fields[1]:
            try:
                batch_size = int(fields[1])
            except ValueError:
                raise SuiteError(f"{path}:{number}: batch size {fields[1]!r} of {fields[0]} "
                                 "is not an integer") from None
            if batch_size <= 0:
                raise SuiteError(f"{path}:{number}: batch size of {fields[0]} must be positive")
        entries.pop(fields[0], None)
        entries[fields[0]] = ListEntry(fields[0], batch_size, number)
    return list(entries.values())


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
    """PyYAML's safe loader, refusing a mapping that repeats a key: PyYAML keeps the last one,
    zoobench's yaml-cpp the first, so the exporter and the harness would each follow a
    different line of one file (zoobench refuses it too, with the same words)."""

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
        list_path = list_file(suites_dir, name)
        yaml_path = os.path.join(suites_dir, f"{name}.yaml")
        have_list, have_yaml = os.path.isfile(list_path), os.path.isfile(yaml_path)
        if require and not have_list and not have_yaml:
            known = sorted(available_suites(suites_dir))
            raise SuiteError(f"unknown suite {name!r}: neither {list_path} nor {yaml_path} exists "
                             f"(suites in {suites_dir}: {', '.join(known) or 'none'})")
        suite = cls(name)
        if have_list:
            suite.list_path = list_path
            with open(list_path, encoding="utf-8") as f:
                suite.entries = parse_models_list(f.read(), list_path)
        if have_yaml:
            suite.yaml_path = yaml_path
            suite.config = load_yaml_file(yaml_path)
        return suite

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
