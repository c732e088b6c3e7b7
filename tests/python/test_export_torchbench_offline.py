"""TorchBench names built offline: every name of suites/torchbench_models_list.txt resolves to
the source meant for it (the checkout, a library mapping, built in, the checkout's code with
synthetic inputs, or a skip with its reason); the mapping tables agree with the checkout's own
model files (where ../shared/torchbench is); TorchBench's inputs; and the builds through
stand-ins for timm, transformers and torch_geometric, which this CPU machine lacks (the GPU
machine has the real ones)."""

import ast
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

import torch
from torch import nn

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import export_zoo  # noqa: E402
from zoo_export import exporter, sources  # noqa: E402
from zoo_export.sources import (torch_geometric_gnn, torchbench_checkout,  # noqa: E402
                                torchbench_synthetic, torchbench_timm, torchbench_transformers,
                                torchvision_models)
from zoo_export.suite_config import SuiteConfig  # noqa: E402

CHECKOUT = os.path.join(REPO_ROOT, "..", "shared", "torchbench")
HAVE_CHECKOUT = os.path.isdir(os.path.join(CHECKOUT, "torchbenchmark"))

# Where each name of the list comes from (docs/coverage.md's "source" column).
SKIPPED = {"drq", "soft_actor_critic", "fastNLP_Bert", "speech_transformer",
           "torch_multimodal_clip"}
EXPECTED_SOURCE = {
    torchvision_models: {"alexnet", "densenet121", "mobilenet_v2", "resnet152", "resnet18",
                         "resnet50", "resnext50_32x4d", "shufflenet_v2_x1_0", "squeezenet1_1",
                         "vgg16"},
    torchbench_timm: {"timm_efficientnet", "timm_nfnet", "timm_regnet", "timm_resnest",
                      "timm_vision_transformer", "timm_vision_transformer_large",
                      "timm_vovnet"},
    torchbench_transformers: {"hf_Albert", "hf_Bart", "hf_Bert", "hf_Bert_large", "hf_BigBird",
                              "hf_DistilBert", "hf_distil_whisper", "hf_GPT2_large",
                              "hf_T5_base", "hf_T5_large"},
    torch_geometric_gnn: {"basic_gnn_edgecnn", "basic_gnn_gcn", "basic_gnn_sage"},
    torchbench_synthetic: {"pytorch_stargan", "Super_SloMo", "functorch_maml_omniglot",
                           "yolov3"},
}


def torchbench_list():
    return SuiteConfig.load(os.path.join(REPO_ROOT, "suites"), "torchbench").entries


class ResolutionTest(unittest.TestCase):
    def test_every_name_of_the_list_has_its_intended_source(self):
        names = [e.name for e in torchbench_list()]
        self.assertEqual(len(names), 56)
        checkout_names = set(names) - set().union(*EXPECTED_SOURCE.values())
        for name in names:
            source, resolved = sources.resolve(name, "torchbench", CHECKOUT)
            expected = next((s for s, ns in EXPECTED_SOURCE.items() if name in ns),
                            torchbench_checkout)
            if expected is torchbench_checkout and not HAVE_CHECKOUT:
                self.assertIsNone(source, name)  # the reason says: pass --torchbench-dir
                continue
            self.assertIs(source, expected, name)
            self.assertEqual(resolved, name)
        self.assertEqual(len(checkout_names), 56 - 34)

    def test_impossible_models_are_skipped_with_their_reason(self):
        options = exporter.ExportOptions(suites_dir=os.path.join(REPO_ROOT, "suites"))
        planned = {p.name: p for p in exporter.plan(options, "torchbench", None, [], [])}
        for name in SKIPPED:
            self.assertRegex(planned[name].skip_reason,
                             r"^torchbench\.yaml skip\.all: impossible offline: \S", name)
        others = {n for n, p in planned.items() if p.skip_reason and "skip.all" in p.skip_reason}
        self.assertEqual(others, SKIPPED)

    def test_a_checkout_that_skips_hf_and_timm_does_not_skip_them_here(self):
        if not HAVE_CHECKOUT:
            self.skipTest(f"no TorchBench checkout at {CHECKOUT}")
        options = exporter.ExportOptions(suites_dir=os.path.join(REPO_ROOT, "suites"),
                                         torchbench_dir=CHECKOUT)
        planned = {p.name: p for p in exporter.plan(options, "torchbench", None, [], [])}
        for name in EXPECTED_SOURCE[torchbench_timm] | EXPECTED_SOURCE[torchbench_transformers]:
            self.assertIsNone(planned[name].skip_reason, name)

    def test_torchbench_batch_sizes_by_mode(self):
        options = exporter.ExportOptions(suites_dir=os.path.join(REPO_ROOT, "suites"))
        expect = {  # name: (inference, training); densenet121's 4 is torchbench.yaml's
            "vgg16": (4, 64), "resnet18": (8, 16), "densenet121": (64, 4),
            "timm_efficientnet": (64, 32), "hf_Albert": (1, 8), "pytorch_stargan": (16, 16),
            "yolov3": (8, 8),  # training: torchbench.yaml's 8, not DEFAULT_TRAIN_BSIZE 16
            "basic_gnn_gcn": (1, 1)}
        for training, column in ((False, 0), (True, 1)):
            options.training = training
            planned = {p.name: p for p in exporter.plan(options, "torchbench", None, [], [])}
            for name, sizes in expect.items():
                self.assertEqual(planned[name].batch_size, sizes[column], (name, training))


# --- the tables against a checkout ----------------------------------------------------------------

def class_constants(path):
    """Class-level NAME = literal of a model's __init__.py, and model_name=... keywords."""
    with open(path) as f:
        tree = ast.parse(f.read())
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
        if isinstance(node, ast.keyword) and node.arg == "model_name" and \
                isinstance(node.value, ast.Constant):
            found["model_name"] = node.value.value
    return found


def module_literal(path, name):
    with open(path) as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return ast.literal_eval(node.value)
    raise KeyError(name)


@unittest.skipUnless(HAVE_CHECKOUT, f"no TorchBench checkout at {CHECKOUT}")
class TablesMatchTheCheckoutTest(unittest.TestCase):
    def model_file(self, name):
        return os.path.join(torchbench_checkout.model_dir(CHECKOUT, name), "__init__.py")

    def batch_sizes(self, name):
        c = class_constants(self.model_file(name))
        return c["DEFAULT_TRAIN_BSIZE"], c["DEFAULT_EVAL_BSIZE"]

    def test_timm(self):
        for name, entry in torchbench_timm.MODELS.items():
            c = class_constants(self.model_file(name))
            self.assertEqual((entry.architecture, entry.train_batch, entry.eval_batch),
                             (c["model_name"], c["DEFAULT_TRAIN_BSIZE"], c["DEFAULT_EVAL_BSIZE"]),
                             name)

    def test_transformers(self):
        configs = os.path.join(CHECKOUT, "torchbenchmark", "util", "framework", "huggingface",
                               "basic_configs.py")
        table = module_literal(configs, "HUGGINGFACE_MODELS")
        cpu_slice = module_literal(configs, "CPU_INPUT_SLICE")
        for name, entry in torchbench_transformers.MODELS.items():
            train_length, eval_length, config, auto_class = table[name]
            self.assertEqual((entry.train_length, entry.eval_length, entry.auto_class),
                             (train_length, eval_length, auto_class), name)
            self.assertEqual(entry.cpu_slice, cpu_slice.get(name, 1), name)
            self.assertEqual((entry.train_batch, entry.eval_batch), self.batch_sizes(name), name)
            if "from_pretrained" in config:  # written out here: the hub name must be TorchBench's
                self.assertIn(f'"{entry.config_origin}"', config, name)
            else:  # built from a constructor there: the same class and arguments here
                self.assertTrue(config.startswith(entry.config_class + "("), name)
                call = ast.parse(config).body[0].value
                arguments = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
                self.assertEqual(arguments, entry.config, name)

    def test_torchvision_and_synthetic_batch_sizes(self):
        for name, sizes in torchvision_models.TORCHBENCH_BATCH_SIZES.items():
            self.assertEqual(sizes, self.batch_sizes(name), name)
        for name, entry in torchbench_synthetic.MODELS.items():
            self.assertEqual((entry.train_batch, entry.eval_batch), self.batch_sizes(name), name)

    def test_gnn(self):
        names = {"gcn": "GCN", "edgecnn": "EdgeCNN", "sage": "GraphSAGE"}
        for name, cls in torch_geometric_gnn.MODELS.items():
            self.assertEqual(names[class_constants(self.model_file(name))["model_name"]], cls)


class TransformersInputsTest(unittest.TestCase):
    """TorchBench's generate_inputs_for_model, without transformers."""

    def test_eval_training_and_seq2seq(self):
        plan = torchbench_transformers.input_plan
        self.assertEqual(plan("hf_Bert", 1, False, "cuda", 30522),
                         [("input_ids", [1, 512], "randint:0:30522")])
        self.assertEqual(plan("hf_Bert", 4, True, "cuda", 30522),
                         [("input_ids", [4, 512], "randint:0:30522"),
                          ("labels", [4, 512], "randint:0:30522")])
        self.assertEqual([n for n, _, _ in plan("hf_T5_base", 1, False, "cuda", 32128)],
                         ["input_ids", "decoder_input_ids"])
        self.assertEqual(plan("hf_T5_base", 1, False, "cuda", 32128)[0][1], [1, 2048])
        self.assertEqual(plan("hf_distil_whisper", 1, False, "cuda", 51864),
                         [("input_features", [1, 80, 3000], "randn")])

    def test_cpu_cuts_the_eval_length_as_torchbench(self):
        self.assertEqual(torchbench_transformers.sequence_length("hf_BigBird", False, "cpu"), 819)
        self.assertEqual(torchbench_transformers.sequence_length("hf_BigBird", False, "cuda"),
                         4096)
        self.assertEqual(torchbench_transformers.sequence_length("hf_BigBird", True, "cpu"), 1024)


# --- builds through stand-ins ---------------------------------------------------------------------

class MaskedLMOutput(dict):
    """Named as transformers' output class: upstream's reduce_to_scalar_loss goes by the name."""

    @property
    def logits(self):
        return self["logits"]


class TinyLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, 8)
        self.head = nn.Linear(8, config.vocab_size)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids))
        out = {"logits": logits}
        if labels is not None:
            out = {"loss": nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()),
                   **out}
        return MaskedLMOutput(out)


def fake_transformers(built):
    tf = types.ModuleType("transformers")
    tf.__version__ = "0.0-standin"

    class AlbertConfig:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)
            self.vocab_size = 64  # small: the stand-in's embedding
            self.hidden_dropout_prob = 0.0

    class AutoModelForMaskedLM:
        @staticmethod
        def from_config(config):
            built.append(config)
            return TinyLM(config)

    tf.AlbertConfig = AlbertConfig
    tf.AutoModelForMaskedLM = AutoModelForMaskedLM
    return {"transformers": tf}


class TinyTimm(nn.Module):
    default_cfg = {"input_size": (3, 24, 24), "test_input_size": (3, 32, 32)}

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x).mean((2, 3))


class TinyGNN(nn.Module):
    def __init__(self, in_channels, hidden_channels, num_layers):
        super().__init__()
        self.args = (in_channels, hidden_channels, num_layers)
        self.lin = nn.Linear(in_channels, hidden_channels)

    def forward(self, x, edge_index):
        messages = self.lin(x)[edge_index[0]]
        return torch.zeros_like(x).index_add(0, edge_index[1], messages)


class UpstreamTorchBenchLossTest(unittest.TestCase):
    """A torchbench hf_* model's training loss is upstream's: reduce_to_scalar_loss of the
    model's output (torchbench.py's compute_loss), here written out by hand."""

    def setUp(self):
        torch.manual_seed(0)
        config = types.SimpleNamespace(vocab_size=64)
        self.model = TinyLM(config)
        self.ids = torch.randint(0, 64, (2, 5))
        self.labels = torch.randint(0, 64, (2, 5))

    def loss_of(self, model):
        from zoo_compile import session
        wrapped = torchbench_transformers.UpstreamLossOutputs(model, ["input_ids", "labels"])
        return session.training_loss(wrapped(self.ids, self.labels), "mean_of_floating_outputs", 1.0)

    def test_the_named_output_types_give_the_mean_of_their_logits_not_the_models_loss(self):
        out = self.model(self.ids, self.labels)
        expected = out["logits"].double().sum() / out["logits"].numel()
        self.assertAlmostEqual(self.loss_of(self.model).item(), expected.item(), places=6)
        self.assertGreater(abs(out["loss"].item() - expected.item()), 1.0)  # the two differ

    def test_another_mapping_gives_the_mean_over_all_its_values(self):
        class PlainOutputs(TinyLM):
            def forward(self, input_ids, labels=None):
                return dict(super().forward(input_ids, labels))

        model = PlainOutputs(types.SimpleNamespace(vocab_size=64))
        model.load_state_dict(self.model.state_dict())
        out = model(self.ids, self.labels)
        expected = (out["loss"].double() + out["logits"].double().mean()) / 2
        self.assertAlmostEqual(self.loss_of(model).item(), expected.item(), places=6)

    @unittest.skipUnless(importlib.util.find_spec("transformers") and
                         importlib.util.find_spec("torch._dynamo"),
                         "needs transformers and torch._dynamo (the GPU machine)")
    def test_real_hf_bert_loss_is_dynamos_reduce_to_scalar_loss(self):
        from torch._dynamo.testing import reduce_to_scalar_loss
        built = torchbench_transformers.build("hf_Bert", sources.BuildContext(batch_size=1, training=True))
        built.module.train(False)
        with torch.no_grad():
            ours = self.loss_of_built(built)
            upstream = reduce_to_scalar_loss(built.module.model(**dict(zip(built.module.input_names,
                                                                            built.inputs))))
        self.assertEqual(built.loss, "mean_of_floating_outputs")
        self.assertAlmostEqual(ours.item(), upstream.item(), places=5)

    @staticmethod
    def loss_of_built(built):
        from zoo_compile import session
        return session.training_loss(built.module(*built.inputs), built.loss, 1.0)


class StandInLibrariesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.zoo = os.path.join(self.tmp.name, "zoo")

    def manifest_and_inputs(self, name):
        folder = os.path.join(self.zoo, "torchbench", name)
        with open(os.path.join(folder, "manifest.json")) as f:
            return json.load(f), torch.load(os.path.join(folder, "inputs.pt"))

    def test_hf_albert_written_out_config_and_torchbench_training_inputs(self):
        built = []
        with mock.patch.dict(sys.modules, fake_transformers(built)):
            code, out = run_cli("--suite", "torchbench", "--only", "hf_Albert", "--zoo",
                                self.zoo, "--training", "--batch-size", "2")
        self.assertEqual(code, 0, out)
        self.assertEqual((built[0].hidden_size, built[0].embedding_size, built[0].num_hidden_layers),
                         (768, 128, 12))  # albert-base-v2, not AlbertConfig's xxlarge defaults
        m, inputs = self.manifest_and_inputs("hf_Albert")
        self.assertEqual(m["source"], "hf:AutoModelForMaskedLM(albert-base-v2)")
        self.assertEqual([(s["name"], s["shape"]) for s in m["inputs"]["spec"]],
                         [("input_ids", [2, 512]), ("labels", [2, 512])])
        # upstream's loss is reduce_to_scalar_loss(output): a MaskedLMOutput's logits alone, not
        # the loss the model computes from the labels
        self.assertEqual((m["training"]["loss"], m["outputs"]["names"]),
                         ("mean_of_floating_outputs", ["logits"]))
        self.assertEqual(m["rebuild"]["source"], "torchbench_transformers")

    def test_hf_attention_is_eager_when_traced_and_the_librarys_default_in_a_recipe(self):
        # A recipe is what the torch.compile backends compile: upstream's harness leaves the
        # attention to transformers (SDPA where the model has it), so the recipe does too; a
        # traced model takes the plain ops every LibTorch runs.
        for extra, expected in (([], "eager"), (["--no-torchscript"], None),
                                (["--no-torchscript", "--hf-attn-implementation", "eager"], "eager")):
            built = []
            zoo = os.path.join(self.tmp.name, "zoo-" + "-".join(extra))
            with mock.patch.dict(sys.modules, fake_transformers(built)):
                code, out = run_cli("--suite", "torchbench", "--only", "hf_Albert", "--zoo", zoo,
                                    "--batch-size", "2", *extra)
            self.assertEqual(code, 0, out)
            self.assertEqual(getattr(built[0], "_attn_implementation", None), expected, extra)
            with open(os.path.join(zoo, "torchbench", "hf_Albert", "manifest.json")) as f:
                context = json.load(f)["rebuild"]["context"]
            self.assertEqual(context["hf_attn_implementation"], expected or "default", extra)

    def test_timm_nfnet_is_dm_nfnet_f0_at_its_default_cfg_size(self):
        calls = []

        def create_model(name, pretrained=False, **kwargs):
            calls.append((name, pretrained))
            return TinyTimm()

        timm = types.ModuleType("timm")
        timm.__version__ = "0.0-standin"
        timm.create_model = create_model
        with mock.patch.dict(sys.modules, {"timm": timm}):
            code, out = run_cli("--suite", "torchbench", "--only", "timm_nfnet", "--zoo",
                                self.zoo, "--batch-size", "2")
        self.assertEqual(code, 0, out)
        self.assertEqual(calls, [("dm_nfnet_f0", False)])
        m, inputs = self.manifest_and_inputs("timm_nfnet")
        self.assertEqual((m["source"], list(inputs[0].shape)),
                         ("timm:dm_nfnet_f0", [2, 3, 24, 24]))  # not the test size

    def test_basic_gnn_graph_inputs(self):
        pyg = types.ModuleType("torch_geometric")
        pyg_nn = types.ModuleType("torch_geometric.nn")
        pyg_nn.GCN = lambda i, h, num_layers: TinyGNN(i, h, num_layers)
        pyg.nn = pyg_nn
        with mock.patch.dict(sys.modules, {"torch_geometric": pyg, "torch_geometric.nn": pyg_nn}):
            code, out = run_cli("--suite", "torchbench", "--only", "basic_gnn_gcn", "--zoo",
                                self.zoo)
        self.assertEqual(code, 0, out)
        m, inputs = self.manifest_and_inputs("basic_gnn_gcn")
        self.assertEqual([list(t.shape) for t in inputs], [[10000, 64], [2, 200000]])
        self.assertLess(int(inputs[1].max()), 10000)
        self.assertEqual(m["source"], "torch_geometric:GCN(64, 64, num_layers=3)")

    def test_without_the_libraries_the_reason_says_which(self):
        hidden = {"timm": None, "transformers": None, "torch_geometric": None}
        with mock.patch.dict(sys.modules, hidden):
            code, out = run_cli("--suite", "torchbench", "-k", "^(timm_vovnet|hf_Bert|basic_gnn_sage)$",
                                "--zoo", self.zoo)
        self.assertEqual(code, 1, out)
        for library in ("timm", "transformers", "torch_geometric"):
            self.assertIn(f"{library} is not installed for {sys.executable}", out)


if __name__ == "__main__":
    unittest.main()
