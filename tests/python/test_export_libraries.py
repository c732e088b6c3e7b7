"""The timm and transformers sources. Where the real library is installed (the GPU machine) a
small real model of each is exported; everywhere, stand-in `timm` / `transformers` modules
with the same API surface (torch.nn models, dict outputs) drive the exporter's code paths:
inputs as upstream builds them, dropout off, flat outputs, the name mapping."""

import collections
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
import torch.nn.functional as F
from torch import nn

from helpers import REPO_ROOT, run_cli  # noqa: F401 (also puts tools/ and scripts/ on sys.path)

import export_zoo  # noqa: E402

HAVE_TIMM = importlib.util.find_spec("timm") is not None
HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None


def load_export(zoo, suite, name):
    folder = os.path.join(zoo, suite, name)
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    inputs = torch.load(os.path.join(folder, "inputs.pt"))
    return manifest, inputs, folder


# --- stand-in transformers ------------------------------------------------------------------------

class ModelOutput(collections.OrderedDict):
    pass


class TinyConfig:
    def __init__(self, **kwargs):
        self.vocab_size = 50
        self.hidden_dropout_prob = 0.1
        self.attention_probs_dropout_prob = 0.1
        self.use_cache = True
        self.num_labels = 2
        self.eos_token_id = 2
        self.pad_token_id = None
        self._attn_implementation = "sdpa"
        self.__dict__.update(kwargs)


class TinyMaskedLM(nn.Module):
    config_class = TinyConfig

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, 8)
        self.drop = nn.Dropout(config.hidden_dropout_prob)
        self.head = nn.Linear(8, config.vocab_size)

    def encode(self, ids):
        return self.head(self.drop(self.embed(ids)))

    def forward(self, input_ids=None, labels=None, **unused):
        logits = self.encode(input_ids)
        out = ModelOutput()
        if labels is not None:
            out["loss"] = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        out["logits"] = logits
        out["attentions"] = None  # not requested: dropped from the flat outputs
        return out


class TinySeq2Seq(TinyMaskedLM):
    def forward(self, input_ids=None, decoder_input_ids=None, labels=None, **unused):
        logits = self.encode(decoder_input_ids) + self.encode(input_ids).mean(1, keepdim=True)
        return ModelOutput(loss=F.cross_entropy(logits.flatten(0, 1), labels.flatten()),
                           logits=logits, encoder_last_hidden_state=self.embed(input_ids))


class TinySequenceClassification(TinyMaskedLM):
    def forward(self, input_ids=None, labels=None, **unused):
        logits = self.encode(input_ids)[:, -1, : self.config.num_labels]
        return ModelOutput(loss=F.cross_entropy(logits, labels), logits=logits)


def fake_transformers():
    tf = types.ModuleType("transformers")
    tf.__version__ = "0.0-standin"
    for name, base in (("BertForMaskedLM", TinyMaskedLM), ("T5ForConditionalGeneration",
                                                             TinySeq2Seq),
                       ("GPT2ForSequenceClassification", TinySequenceClassification)):
        tf.__dict__[name] = type(name, (base,), {})
    tf.LongformerConfig = type("LongformerConfig", (TinyConfig,), {})

    class AutoModelForMaskedLM:
        @staticmethod
        def from_config(config):
            return type("LongformerForMaskedLM", (TinyMaskedLM,), {})(config)

    tf.AutoModelForMaskedLM = AutoModelForMaskedLM
    return tf


class StandInTransformersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.zoo = os.path.join(self.tmp.name, "zoo")
        patcher = mock.patch.dict(sys.modules, {"transformers": fake_transformers()})
        patcher.start()
        self.addCleanup(patcher.stop)

    def export(self, name, *extra):
        return run_cli("--suite", "huggingface", "--only", name, "--batch-size", "2",
                       "--seq-len", "6", "--zoo", self.zoo, "--training", *extra)

    def test_masked_lm_gets_labels_and_flat_outputs(self):
        code, out = self.export("BertForMaskedLM")
        self.assertEqual(code, 0, out)
        m, inputs, folder = load_export(self.zoo, "huggingface", "BertForMaskedLM")
        self.assertEqual(m["source"], "hf:BertForMaskedLM")
        self.assertEqual([(s["name"], s["shape"], s["init"]) for s in m["inputs"]["spec"]],
                         [("input_ids", [2, 6], "randint:0:50"), ("labels", [2, 6],
                                                                  "randint:0:50")])
        self.assertEqual(m["outputs"]["names"], ["loss", "logits"])
        self.assertEqual(m["training"]["loss"], "first_output")  # upstream's compute_loss
        self.assertEqual(m["details"]["attn_implementation"], "eager")
        self.assertTrue(m["deepcopy"])
        loss, logits = torch.jit.load(os.path.join(folder, "eval.pt"))(*inputs)
        self.assertEqual(list(logits.shape), [2, 6, 50])
        torch.testing.assert_close(loss, F.cross_entropy(logits.flatten(0, 1),
                                                         inputs[1].flatten()))
        # dropout was 0.1 in the config: the exporter zeroes it before building the model
        train = torch.jit.load(os.path.join(folder, "train.pt"))
        torch.manual_seed(0)
        a = train(*inputs)[1]
        torch.manual_seed(1)
        torch.testing.assert_close(a, train(*inputs)[1], rtol=0, atol=0)

    def test_encoder_decoder_gets_decoder_inputs_without_aliasing(self):
        code, out = self.export("T5ForConditionalGeneration")
        self.assertEqual(code, 0, out)
        m, inputs, _ = load_export(self.zoo, "huggingface", "T5ForConditionalGeneration")
        self.assertEqual([s["name"] for s in m["inputs"]["spec"]],
                         ["input_ids", "decoder_input_ids", "labels"])
        self.assertTrue(torch.equal(inputs[0], inputs[1]))
        self.assertNotEqual(inputs[0].data_ptr(), inputs[1].data_ptr())
        self.assertEqual(m["outputs"]["names"], ["loss", "logits", "encoder_last_hidden_state"])

    def test_sequence_classification_labels_and_pad_token(self):
        code, out = self.export("GPT2ForSequenceClassification")
        self.assertEqual(code, 0, out)
        m, inputs, _ = load_export(self.zoo, "huggingface", "GPT2ForSequenceClassification")
        self.assertEqual([(s["name"], s["shape"]) for s in m["inputs"]["spec"]],
                         [("input_ids", [2, 6]), ("labels", [2])])

    def test_names_that_are_not_classes_map_to_a_config_and_auto_class(self):
        code, out = self.export("AllenaiLongformerBase")
        self.assertEqual(code, 0, out)
        m, inputs, _ = load_export(self.zoo, "huggingface", "AllenaiLongformerBase")
        self.assertEqual(m["source"],
                         "hf:LongformerForMaskedLM(allenai/longformer-base-4096 config)")
        self.assertEqual(m["details"]["class"], "LongformerForMaskedLM")
        self.assertEqual(m["inputs"]["spec"][0]["init"], "randint:0:50265")
        # huggingface.yaml divides the default batch size: without --batch-size, 16 / 2
        code, out = run_cli("--suite", "huggingface", "--only", "AllenaiLongformerBase",
                            "--list")
        self.assertRegex(out, r"huggingface/AllenaiLongformerBase +8 ")

    def test_unknown_class_is_a_clear_failure(self):
        code, out = self.export("NoSuchModelForMaskedLM")
        self.assertEqual(code, 1)
        self.assertIn("transformers 0.0-standin has no class 'NoSuchModelForMaskedLM'", out)


# --- stand-in timm --------------------------------------------------------------------------------

def fake_timm(calls):
    timm = types.ModuleType("timm")
    timm.__version__ = "0.0-standin"
    data = types.ModuleType("timm.data")

    def create_model(name, pretrained=False, **kwargs):
        calls.append((name, pretrained, kwargs))
        if name == "nope":
            raise RuntimeError(f"Unknown model ({name})")
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                             nn.Linear(4, 10))

    def resolve_data_config(args, model=None, use_test_size=False):
        return {"input_size": (3, 20, 20) if use_test_size else (3, 16, 16)}

    timm.create_model = create_model
    data.resolve_data_config = resolve_data_config
    timm.data = data
    return {"timm": timm, "timm.data": data}


class StandInTimmTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.zoo = os.path.join(self.tmp.name, "zoo")
        self.calls = []
        patcher = mock.patch.dict(sys.modules, fake_timm(self.calls))
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_random_weights_upstream_kwargs_and_loss_scale(self):
        code, out = run_cli("--suite", "timm_models", "--only", "mobilevit_s", "--zoo", self.zoo,
                            "--batch-size", "2", "--training")
        self.assertEqual(code, 0, out)
        name, pretrained, kwargs = self.calls[0]
        self.assertEqual((name, pretrained), ("mobilevit_s", False))
        self.assertEqual(kwargs["drop_rate"], 0.0)
        m, inputs, _ = load_export(self.zoo, "timm_models", "mobilevit_s")
        self.assertEqual(m["source"], "timm:mobilevit_s")
        # --training: the train input size; timm_models.yaml scaled_compute_loss: / 1000
        self.assertEqual(list(inputs[0].shape), [2, 3, 16, 16])
        self.assertEqual(m["training"]["loss_scale"], 1e-3)
        # The stand-in's version, or the installed timm's where the real package is present.
        self.assertTrue(m["versions"]["timm"])

    def test_inference_uses_the_test_size_and_unknown_names_fail_clearly(self):
        code, out = run_cli("--suite", "timm_models", "-k", "^repvgg_a2$|^nope$", "--zoo",
                            self.zoo, "--batch-size", "1", "--suites-dir", self.suites())
        self.assertEqual(code, 0, out)
        _, inputs, _ = load_export(self.zoo, "timm_models", "repvgg_a2")
        self.assertEqual(list(inputs[0].shape), [1, 3, 20, 20])
        self.assertIn("timm 0.0-standin has no model 'nope'", out)

    def suites(self):
        folder = os.path.join(self.tmp.name, "suites")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "timm_models_list.txt"), "w") as f:
            f.write("repvgg_a2 128\nnope 8\n")
        return folder


# --- the real libraries (the GPU machine) ------------------------------------------------------------

@unittest.skipUnless(HAVE_TRANSFORMERS, "transformers is not installed for this python")
class RealTransformersTest(unittest.TestCase):
    def test_small_real_models_export_and_reproduce(self):
        with tempfile.TemporaryDirectory() as zoo:
            code, out = run_cli("--suite", "huggingface", "-k", "^BertForMaskedLM$",
                                "-k", "^T5ForConditionalGeneration$", "--batch-size", "1",
                                "--seq-len", "16", "--zoo", zoo, "--training")
            self.assertEqual(code, 0, out)
            self.assertIn("exported 2, failed 0", out)
            for name in ("BertForMaskedLM", "T5ForConditionalGeneration"):
                m, inputs, folder = load_export(zoo, "huggingface", name)
                self.assertEqual(m["outputs"]["names"][:2], ["loss", "logits"])
                self.assertLess(m["artifacts"]["eval"]["check"]["max_abs_diff"], 1e-3)


@unittest.skipUnless(HAVE_TIMM, "timm is not installed for this python")
class RealTimmTest(unittest.TestCase):
    def test_a_small_real_model_exports_and_reproduces(self):
        with tempfile.TemporaryDirectory() as zoo:
            code, out = run_cli("--suite", "timm_models", "--only", "mobilenetv2_100",
                                "--batch-size", "1", "--zoo", zoo, "--training")
            self.assertEqual(code, 0, out)
            m, inputs, folder = load_export(zoo, "timm_models", "mobilenetv2_100")
            self.assertEqual(list(inputs[0].shape), [1, 3, 224, 224])
            self.assertEqual(set(m["artifacts"]), {"eval", "train"})


if __name__ == "__main__":
    unittest.main()
