"""--torchbench-dir: models through TorchBench's model API and metadata from both checkout
layouts (older: constants in userbenchmark/dynamo/dynamobench/torchbench.py; newer: only
torchbench.yaml there), the process state a checkout model changes (put back after it), and
its DEEPCOPY contract, on small fake checkouts made here."""

import contextlib
import copy
import io
import json
import os
import sys
import tempfile
import textwrap
import unittest

import torch

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import export_zoo  # noqa: E402
from zoo_export import process_state  # noqa: E402
from zoo_export.sources import torchbench_checkout  # noqa: E402

# A TorchBench model package: Model(test, device, batch_size, extra_args) with get_module().
TINY_MLP = textwrap.dedent('''
    import torch

    class Model:
        DEFAULT_TRAIN_BSIZE = 8
        DEFAULT_EVAL_BSIZE = 4

        def __init__(self, test, device, batch_size=None, extra_args=[]):
            self.test = test
            default = self.DEFAULT_TRAIN_BSIZE if test == "train" else self.DEFAULT_EVAL_BSIZE
            self.batch_size = batch_size or default
            self.model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32),
                                             torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                             torch.nn.Linear(32, 4)).to(device)
            self.example_inputs = (torch.randn(self.batch_size, 16, device=device),)

        def get_module(self):
            return self.model, self.example_inputs
''')

# Its example inputs are a dict (keyword arguments), and its Model takes no extra_args.
DICT_INPUTS = textwrap.dedent('''
    import torch

    class Scorer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(50, 8)

        def forward(self, ids, weights):
            return (self.embed(ids) * weights.unsqueeze(-1)).sum(1)

    class Model:
        def __init__(self, test, device, batch_size=None):
            self.batch_size = batch_size or 3
            self.model = Scorer().to(device)
            self.inputs = {"ids": torch.randint(0, 50, (self.batch_size, 7), device=device),
                           "weights": torch.rand(self.batch_size, 7, device=device)}

        def get_module(self):
            return self.model, self.inputs
''')

# Older layout: torchbench.py imports the dynamo runner, so running it here would fail.
OLD_TORCHBENCH_PY = textwrap.dedent('''
    #!/usr/bin/env python3
    import torch
    from common import BenchmarkRunner, main
    from torch._dynamo.testing import collect_results

    USE_SMALL_BATCH_SIZE = {
        "tiny_mlp": 3,
        "yolov3": 8,  # comment
    }
    INFERENCE_SMALL_BATCH_SIZE = {"tiny_mlp": 5}
    DETECTRON2_MODELS = {"detectron2_a", "detectron2_b"}
    SKIP = {"broken_model"}
    SKIP_TRAIN = {"pyhpc_equation_of_state"}
    SKIP_TRAIN.update(DETECTRON2_MODELS)
    VERY_SLOW_BENCHMARKS = {"hf_BigBird"}
    SLOW_BENCHMARKS = {*VERY_SLOW_BENCHMARKS, "BERT_pytorch"}
    REQUIRE_HIGHER_TOLERANCE = {"tiny_mlp"}
    DONT_CHANGE_BATCH_SIZE = {"pinned"}
    computed = some_function()

    class TorchBenchmarkRunner(BenchmarkRunner):
        pass
''')

NEW_TORCHBENCH_YAML = textwrap.dedent('''
    batch_size:
      training: {tiny_mlp: 2}
      inference: {tiny_mlp: 6}
    skip:
      all: [broken_model]
''')


# TorchBench's util/env_check.py:set_random_seed, as upstream writes it, but seeding 7 rather
# than upstream's 1337 (which is also zoobench's seed, and would hide the damage).
ENV_CHECK = textwrap.dedent('''
    MAIN_RANDOM_SEED = 7

    def set_random_seed():
        import random
        import numpy
        import torch

        def deterministic_torch_manual_seed(*args, **kwargs):
            from torch._C import default_generator
            import torch.cuda
            if not torch.cuda._is_in_bad_fork():
                torch.cuda.manual_seed_all(MAIN_RANDOM_SEED)
            import torch.xpu
            if not torch.xpu._is_in_bad_fork():
                torch.xpu.manual_seed_all(MAIN_RANDOM_SEED)
            return default_generator.manual_seed(MAIN_RANDOM_SEED)

        torch.manual_seed(MAIN_RANDOM_SEED)
        random.seed(MAIN_RANDOM_SEED)
        numpy.random.seed(MAIN_RANDOM_SEED)
        torch.manual_seed = deterministic_torch_manual_seed
''')

# A model that changes what real checkout models change: the seed function (BenchmarkModel's
# __init__), cuDNN flags at import (pytorch_stargan, Super_SloMo), deterministic algorithms and
# CUBLAS_WORKSPACE_CONFIG (the accuracy path), the default device (llama), threads; and uses
# torch.func (lennard_jones), which torch < 2.0 lacks.
STATE_CHANGER = textwrap.dedent('''
    import os
    import torch
    from torch.func import vmap
    from torchbenchmark.util.env_check import set_random_seed

    torch.backends.cudnn.benchmark = not torch.backends.cudnn.benchmark
    torch.backends.cudnn.deterministic = not torch.backends.cudnn.deterministic

    class Model:
        DEFAULT_EVAL_BSIZE = 4

        def __init__(self, test, device, batch_size=None, extra_args=[]):
            set_random_seed()
            torch.manual_seed(0)  # goes to the replacement: seeds 7
            torch.use_deterministic_algorithms(True)
            os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
            torch.set_default_device(device)
            torch.set_num_threads(1)
            if os.environ.get("STATE_CHANGER_FAILS"):
                raise RuntimeError("state_changer fails after changing the process state")
            self.batch_size = batch_size or self.DEFAULT_EVAL_BSIZE
            self.model = torch.nn.Linear(3, 2)
            self.example_inputs = (torch.randn(self.batch_size, 3),)

        def get_module(self):
            return self.model, self.example_inputs
''')

# DEEPCOPY = False, and a module that recurses forever under copy.deepcopy (as fairseq's hub
# interface did for the Ascend suite): exporting it must never deep-copy it.
NO_DEEPCOPY = textwrap.dedent('''
    import copy
    import torch

    class Recursing(torch.nn.Linear):
        def __deepcopy__(self, memo):
            return copy.deepcopy(self)  # no memo: recurses until RecursionError

    class Model:
        DEEPCOPY = False

        def __init__(self, test, device, batch_size=None, extra_args=[]):
            self.batch_size = batch_size or 2
            self.model = Recursing(5, 3)
            self.example_inputs = (torch.randn(self.batch_size, 5),)

        def get_module(self):
            return self.model, self.example_inputs
''')


def make_checkout(root, layout):
    def write(rel, text):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    write("torchbenchmark/__init__.py", "")
    write("torchbenchmark/models/__init__.py", "")
    write("torchbenchmark/models/tiny_mlp/__init__.py", TINY_MLP)
    write("torchbenchmark/util/__init__.py", "")
    write("torchbenchmark/util/env_check.py", ENV_CHECK)
    write("torchbenchmark/models/state_changer/__init__.py", STATE_CHANGER)
    write("torchbenchmark/models/no_deepcopy/__init__.py", NO_DEEPCOPY)
    write("torchbenchmark/canary_models/__init__.py", "")
    write("torchbenchmark/canary_models/dict_scorer/__init__.py", DICT_INPUTS)
    bench = "userbenchmark/dynamo/dynamobench/"
    if layout == "old":
        write(bench + "torchbench.py", OLD_TORCHBENCH_PY)
    else:
        # newer checkouts keep a torchbench.py that loads the yaml; the yaml wins
        write(bench + "torchbench.py", "from common import main\nSKIP = {'from_py'}\n")
        write(bench + "torchbench.yaml", NEW_TORCHBENCH_YAML)


class MetadataTest(unittest.TestCase):
    def test_old_layout_constants_are_read_without_running_the_file(self):
        with tempfile.TemporaryDirectory() as root:
            make_checkout(root, "old")
            meta, layout = torchbench_checkout.read_metadata(root)
        self.assertEqual(layout, "torchbench.py constants")
        self.assertEqual(meta["batch_size"], {"training": {"tiny_mlp": 3, "yolov3": 8},
                                              "inference": {"tiny_mlp": 5}})
        self.assertEqual(meta["skip"]["all"], ["broken_model"])
        self.assertEqual(sorted(meta["skip"]["test"]["training"]),
                         ["detectron2_a", "detectron2_b", "pyhpc_equation_of_state"])
        self.assertEqual(sorted(meta["slow"]), ["BERT_pytorch", "hf_BigBird"])
        self.assertEqual(meta["tolerance"]["higher"], ["tiny_mlp"])
        self.assertEqual(meta["dont_change_batch_size"], ["pinned"])

    def test_new_layout_reads_the_yaml(self):
        with tempfile.TemporaryDirectory() as root:
            make_checkout(root, "new")
            meta, layout = torchbench_checkout.read_metadata(root)
        self.assertEqual(layout, "torchbench.yaml")
        self.assertEqual(meta["batch_size"]["inference"], {"tiny_mlp": 6})
        self.assertEqual(meta["skip"]["all"], ["broken_model"])


class CheckoutExportTest(unittest.TestCase):
    def export(self, layout, *extra):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        checkout = os.path.join(tmp.name, f"benchmark_{layout}")
        make_checkout(checkout, layout)
        zoo = os.path.join(tmp.name, "zoo")
        code, out = run_cli("--suite", "torchbench", "--torchbench-dir", checkout,
                            "--zoo", zoo, *extra)
        return code, out, zoo

    def manifest(self, zoo, name):
        with open(os.path.join(zoo, "torchbench", name, "manifest.json")) as f:
            return json.load(f)

    def check_reproduces(self, zoo, name, role="eval"):
        folder = os.path.join(zoo, "torchbench", name)
        inputs = torch.load(os.path.join(folder, "inputs.pt"))
        module = torch.jit.load(os.path.join(folder, f"{role}.pt"))
        with torch.no_grad():
            out = module(*inputs)
        return inputs, out

    def test_old_layout_batch_sizes_and_model_api(self):
        code, out, zoo = self.export("old", "--only", "tiny_mlp", "--training")
        self.assertEqual(code, 0, out)
        m = self.manifest(zoo, "tiny_mlp")
        # --training: the model is built with test="train" and the training batch size
        self.assertEqual((m["source"], m["batch_size"]), ("torchbench:tiny_mlp", 3))
        self.assertEqual(m["details"]["torchbench_metadata"], "torchbench.py constants")
        self.assertEqual(m["details"]["test"], "train")
        self.assertEqual(set(m["artifacts"]), {"eval", "train"})
        inputs, out = self.check_reproduces(zoo, "tiny_mlp")
        self.assertEqual((list(inputs[0].shape), list(out.shape)), ([3, 16], [3, 4]))
        # dropout is off in train.pt: two training forwards agree
        folder = os.path.join(zoo, "torchbench", "tiny_mlp")
        train = torch.jit.load(os.path.join(folder, "train.pt"))
        torch.manual_seed(0)
        a = train(*inputs)
        torch.manual_seed(1)
        b = train(*inputs)
        torch.testing.assert_close(a, b, rtol=0, atol=0)

    def test_new_layout_batch_size_from_yaml(self):
        code, out, zoo = self.export("new", "--only", "tiny_mlp")
        self.assertEqual(code, 0, out)
        m = self.manifest(zoo, "tiny_mlp")
        self.assertEqual(m["batch_size"], 6)
        self.assertEqual(m["details"]["torchbench_metadata"], "torchbench.yaml")
        self.assertEqual(m["details"]["test"], "eval")
        inputs, out = self.check_reproduces(zoo, "tiny_mlp")
        self.assertEqual(list(out.shape), [6, 4])

    def test_dict_inputs_become_positional_in_their_order(self):
        code, out, zoo = self.export("new", "--only", "dict_scorer", "--batch-size", "2")
        self.assertEqual(code, 0, out)
        m = self.manifest(zoo, "dict_scorer")
        self.assertEqual([(s["name"], s["dtype"], s["shape"]) for s in m["inputs"]["spec"]],
                         [("ids", "int64", [2, 7]), ("weights", "float32", [2, 7])])
        self.assertIs(m["details"]["canary"], True)  # it lives in canary_models
        inputs, out = self.check_reproduces(zoo, "dict_scorer")
        self.assertEqual(list(out.shape), [2, 8])

    def test_builtin_names_still_come_from_torchvision(self):
        code, out, _ = self.export("new", "--list", "-k", "^squeezenet1_1$|^tiny_mlp$")
        self.assertEqual(code, 0, out)
        self.assertRegex(out, r"torchbench/squeezenet1_1 .*torchvision:squeezenet1_1")

    def test_missing_checkout_folder_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, out = run_cli("--suite", "torchbench", "--torchbench-dir", tmp, "--list")
        self.assertEqual(code, 2)
        self.assertIn("has no torchbenchmark/ folder", out)


    def test_canary_models_only_with_only_or_when_the_yaml_names_them(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        checkout = os.path.join(tmp.name, "benchmark")
        make_checkout(checkout, "new")
        suites = os.path.join(tmp.name, "suites")
        os.makedirs(suites)
        with open(os.path.join(suites, "torchbench_models_list.txt"), "w") as f:
            f.write("tiny_mlp\ndict_scorer\n")
        code, out = run_cli("--suite", "torchbench", "--torchbench-dir", checkout,
                            "--suites-dir", suites, "--list")
        self.assertRegex(out, r"torchbench/dict_scorer .*skip: canary model "
                              r"\(torchbenchmark/canary_models\): exported only with --only")
        self.assertRegex(out, r"torchbench/tiny_mlp .* export")
        with open(os.path.join(suites, "torchbench.yaml"), "w") as f:
            f.write("canary_models: [dict_scorer]\n")
        code, out = run_cli("--suite", "torchbench", "--torchbench-dir", checkout,
                            "--suites-dir", suites, "--list")
        self.assertRegex(out, r"torchbench/dict_scorer .* export")


class ProcessStateTest(unittest.TestCase):
    """A checkout model changes process-wide state; every bit of it is back after the model,
    also when the model fails, and the next model in the same process is built as if alone."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.checkout = os.path.join(self.tmp.name, "benchmark")
        make_checkout(self.checkout, "new")
        self.before = process_state.snapshot()
        self.seed_function = torch.manual_seed

    def export(self, zoo, *args):
        return run_cli("--suite", "torchbench", "--torchbench-dir", self.checkout, "--zoo",
                       os.path.join(self.tmp.name, zoo), *args)

    def assert_state_as_before(self):
        self.assertIs(torch.manual_seed, self.seed_function)
        self.assertEqual(process_state.snapshot(), self.before)
        self.assertIsNone(process_state.default_device())
        self.assertEqual(torch.get_default_dtype(), torch.float32)

    def test_state_is_back_after_a_model_that_changes_it(self):
        code, out = self.export("zoo", "--only", "state_changer")
        self.assertEqual(code, 0, out)
        self.assert_state_as_before()
        # the shims for this torch are gone again
        if self.before["torch.xpu"] is process_state._ABSENT:
            self.assertNotIn("torch.xpu", sys.modules)
        if self.before["torch.func"] is process_state._ABSENT:
            self.assertNotIn("torch.func", sys.modules)

    def test_state_is_back_after_a_model_that_fails(self):
        os.environ["STATE_CHANGER_FAILS"] = "1"
        self.addCleanup(os.environ.pop, "STATE_CHANGER_FAILS", None)
        code, out = self.export("zoo", "--only", "state_changer")
        self.assertEqual(code, 1, out)
        self.assertIn("state_changer fails after changing the process state", out)
        self.assert_state_as_before()

    def test_the_next_model_is_seeded_as_when_exported_alone(self):
        code, out = self.export("alone", "--only", "tiny_mlp")
        self.assertEqual(code, 0, out)
        suites = os.path.join(self.tmp.name, "suites")
        os.makedirs(suites)
        with open(os.path.join(suites, "torchbench_models_list.txt"), "w") as f:
            f.write("state_changer\ntiny_mlp\n")
        code, out = self.export("after", "--suites-dir", suites)
        self.assertEqual(code, 0, out)
        self.assertIn("exported 2, failed 0", out)
        for zoo in ("alone", "after"):
            folder = os.path.join(self.tmp.name, zoo, "torchbench", "tiny_mlp")
            inputs = torch.load(os.path.join(folder, "inputs.pt"))
            if zoo == "alone":
                expected = inputs
            else:
                self.assertTrue(torch.equal(inputs[0], expected[0]),
                                "tiny_mlp's inputs differ after state_changer: seeded by the "
                                "checkout's replacement of torch.manual_seed")
        self.assert_state_as_before()

    def test_a_build_alone_restores_the_state_as_the_rebuild_record_needs(self):
        from zoo_export import sources

        ctx = sources.BuildContext(batch_size=2, torchbench_dir=self.checkout)
        bundle = torchbench_checkout.build("state_changer", ctx)
        self.assertEqual(list(bundle.inputs[0].shape), [2, 3])
        self.assert_state_as_before()


class DeepcopyContractTest(unittest.TestCase):
    def test_a_model_that_must_not_be_copied_is_exported_without_copying(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        checkout = os.path.join(tmp.name, "benchmark")
        make_checkout(checkout, "new")
        zoo = os.path.join(tmp.name, "zoo")
        code, out = run_cli("--suite", "torchbench", "--torchbench-dir", checkout, "--zoo", zoo,
                            "--only", "no_deepcopy", "--training")
        self.assertEqual(code, 0, out)
        with open(os.path.join(zoo, "torchbench", "no_deepcopy", "manifest.json")) as f:
            self.assertIs(json.load(f)["deepcopy"], False)
        # the model really does recurse under deepcopy: an exporter that copied it would fail
        from zoo_export import sources

        bundle = torchbench_checkout.build(
            "no_deepcopy", sources.BuildContext(batch_size=2, torchbench_dir=checkout))
        self.assertFalse(bundle.deepcopy)
        with self.assertRaises(RecursionError):
            copy.deepcopy(bundle.module)


if __name__ == "__main__":
    unittest.main()
