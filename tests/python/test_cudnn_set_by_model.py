"""suites/torchbench.yaml's zoobench.cudnn_set_by_model against the TorchBench checkout's code.

Upstream's torchbench.py imports each model's module and builds its Model after its determinism
setup, so the cuDNN switches the model's code sets then win: module-level statements of
torchbenchmark/models/NAME/__init__.py, the statements of Model.__init__ (those under an `if`
included: the CUDA branch is the one taken on the GPU), and those of the constructor of the
framework class it builds on (TorchVisionModel, TimmModel). This reads them with Python's ast
and checks the table holds exactly that for every model of the list.
"""

import ast
import os
import unittest

import yaml

from helpers import REPO_ROOT
from zoo_export.suite_config import SuiteConfig  # noqa: E402 (helpers puts tools/ on sys.path)

CHECKOUT = os.path.join(REPO_ROOT, "..", "shared", "torchbench", "torchbenchmark")
HAVE_CHECKOUT = os.path.isdir(os.path.join(CHECKOUT, "models"))
SWITCHES = ("deterministic", "benchmark")


def switch_assignments(statements):
    """{switch: value} of `...cudnn.<switch> = True|False` among these statements and the
    statements nested under them (if/with/try), in order: a later one wins."""
    found = {}
    for node in statements:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if (isinstance(target, ast.Attribute) and target.attr in SWITCHES
                        and isinstance(target.value, (ast.Attribute, ast.Name))
                        and getattr(target.value, "attr", getattr(target.value, "id", "")) == "cudnn"
                        and isinstance(node.value.value, bool)):
                    found[target.attr] = node.value.value
        for field in ("body", "orelse", "handlers", "finalbody"):
            nested = getattr(node, field, None)
            if isinstance(nested, list) and not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found.update(switch_assignments(nested))
    return found


def constructor_statements(tree, class_name):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return item.body, [getattr(b, "id", getattr(b, "attr", "")) for b in node.bases]
            return [], [getattr(b, "id", getattr(b, "attr", "")) for b in node.bases]
    return [], []


def parse(path):
    with open(path) as f:
        return ast.parse(f.read(), path)


FRAMEWORK_CLASSES = {
    "TorchVisionModel": os.path.join("util", "framework", "vision", "model_factory.py"),
    "TimmModel": os.path.join("util", "framework", "timm", "model_factory.py"),
}


def switches_set_by(model):
    """What upstream's loading of `model` leaves cuDNN's switches at, as far as its code sets them."""
    tree = parse(os.path.join(CHECKOUT, "models", model, "__init__.py"))
    init, bases = constructor_statements(tree, "Model")
    found = {}
    for base in bases:  # the framework class's constructor runs first (super().__init__)
        if base in FRAMEWORK_CLASSES:
            framework = parse(os.path.join(CHECKOUT, FRAMEWORK_CLASSES[base]))
            found.update(switch_assignments(constructor_statements(framework, base)[0]))
    found = {**switch_assignments(tree.body), **found}  # module statements run at import, first
    found.update(switch_assignments(init))
    return found


def shipped_table():
    with open(os.path.join(REPO_ROOT, "suites", "torchbench.yaml")) as f:
        return yaml.safe_load(f)["zoobench"]["cudnn_set_by_model"]


def list_names():
    return [e.name for e in SuiteConfig.load(os.path.join(REPO_ROOT, "suites"), "torchbench").entries]


class ReaderOnKnownCode(unittest.TestCase):
    def test_module_constructor_and_nested_assignments_count_methods_do_not(self):
        tree = ast.parse(
            "import torch\n"
            "torch.backends.cudnn.benchmark = True\n"
            "class Model(TorchVisionModel):\n"
            "    def __init__(self):\n"
            "        if self.device == 'cuda':\n"
            "            torch.backends.cudnn.deterministic = True\n"
            "    def eval(self):\n"
            "        torch.backends.cudnn.benchmark = False\n")
        init, bases = constructor_statements(tree, "Model")
        self.assertEqual(bases, ["TorchVisionModel"])
        self.assertEqual(switch_assignments(tree.body), {"benchmark": True})
        self.assertEqual(switch_assignments(init), {"deterministic": True})


@unittest.skipUnless(HAVE_CHECKOUT, "needs the TorchBench checkout at ../shared/torchbench")
class TableMatchesTheCheckout(unittest.TestCase):
    def test_every_list_model_the_checkout_has_is_in_the_table_as_its_code_sets_it(self):
        table = shipped_table()
        checked = 0
        for model in list_names():
            if not os.path.isfile(os.path.join(CHECKOUT, "models", model, "__init__.py")):
                continue  # built offline from a library, not the checkout's code
            checked += 1
            with self.subTest(model=model):
                self.assertEqual(table.get(model, {}), switches_set_by(model))
        self.assertGreater(checked, 30)

    def test_the_table_names_only_list_models(self):
        self.assertEqual(set(shipped_table()) - set(list_names()), set())

    def test_torchvision_and_timm_classes_turn_benchmark_on_and_determinism_off(self):
        self.assertEqual(switches_set_by("resnet50"), {"deterministic": False, "benchmark": True})
        self.assertEqual(switches_set_by("timm_vovnet"), {"deterministic": False, "benchmark": True})


if __name__ == "__main__":
    unittest.main()
