"""transformers: the class names of suites/huggingface_models_list.txt (and upstream's extra
names such as AllenaiLongformerBase), built as upstream's benchmarks/dynamo/huggingface.py
builds them: the class's default config, random weights, upstream's sequence lengths and
inputs (decoder inputs for encoder-decoder models, labels so that outputs include the loss).

Differences from upstream, for TorchScript: caches off, dropout probabilities 0 (upstream
keeps dropout and relies on Inductor's fallback_random), the eager attention implementation
when traced (plain matmul/softmax ops that every backend and LibTorch version runs; a recipe
for the torch.compile backends keeps the library's default, as upstream; choose with
--hf-attn-implementation), and a wrapper taking positional tensors and returning a flat tuple.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable, Dict, Optional, Tuple

import torch

from ..model_bundle import ExportableModel, FlatOutputs, InputSpec, SourceUnavailable, make_input

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_CLASS_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*(For[A-Z][A-Za-z0-9]*|LMHeadModel)$")


def _config(config_cls, **values):
    """config_cls(**values); a config class that rejects one of them as a constructor argument
    (their signatures differ between transformers versions) gets it set as an attribute."""
    try:
        return config_cls(**values)
    except TypeError:
        config = config_cls()
        for key, value in values.items():
            setattr(config, key, value)
        return config


def _longformer_base_4096(tf):
    # allenai/longformer-base-4096's config, written out: nothing is downloaded
    return _config(
        tf.LongformerConfig, attention_window=512, vocab_size=50265, max_position_embeddings=4098,
        hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        layer_norm_eps=1e-5, type_vocab_size=1, initializer_range=0.02, pad_token_id=1,
        bos_token_id=0, eos_token_id=2, sep_token_id=2)


# Names that are not transformers classes: name -> (config factory, Auto class). Upstream
# reads these configs from the hub; the defaults of these config classes are those models.
EXTRA_MODELS: Dict[str, Tuple[Callable[[Any], Any], str]] = {
    "AllenaiLongformerBase": (_longformer_base_4096, "AutoModelForMaskedLM"),
    "T5Small": (lambda tf: tf.T5Config(), "AutoModelForSeq2SeqLM"),
    "DistillGPT2": (lambda tf: _config(tf.GPT2Config, n_layer=6), "AutoModelForCausalLM"),
    "GoogleFnet": (lambda tf: tf.FNetConfig(), "AutoModelForMaskedLM"),
    "YituTechConvBert": (lambda tf: tf.ConvBertConfig(), "AutoModelForMaskedLM"),
    "Reformer": (lambda tf: tf.ReformerConfig(), "AutoModelForMaskedLM"),
}
EXTRA_SOURCES = {
    "AllenaiLongformerBase": "LongformerForMaskedLM(allenai/longformer-base-4096 config)",
    "T5Small": "T5ForConditionalGeneration(t5-small config)",
    "DistillGPT2": "GPT2LMHeadModel(distilgpt2 config)",
    "GoogleFnet": "FNetForMaskedLM(google/fnet-base config)",
    "YituTechConvBert": "ConvBertForMaskedLM(YituTech/conv-bert-base config)",
    "Reformer": "ReformerForMaskedLM(default config)",
}
# upstream huggingface.yaml: "Fails deepcopy"; the harness reloads these instead of cloning
NO_DEEPCOPY = {"BlenderbotForConditionalGeneration", "GPTNeoForCausalLM",
               "GPTNeoForSequenceClassification"}
# upstream: these need a pad token to handle batch > 1
_PAD_TOKEN_CLASSES = ("GPT2ForSequenceClassification", "GPTNeoForSequenceClassification",
                      "GPTJForSequenceClassification")
# upstream: classes fed decoder_input_ids = input_ids
_DECODER_INPUT_CLASSES = {"BlenderbotModel", "BlenderbotSmallModel",
                          "BlenderbotForConditionalGeneration", "PegasusModel", "MarianModel",
                          "MarianMTModel"}
_NUM_CHOICES = 3
# inputs that make the model compute its loss, which then is outputs[0]
_LABEL_INPUTS = {"labels", "start_positions", "end_positions", "next_sentence_label",
                 "sentence_order_label"}


def provides(name: str) -> bool:
    return name in EXTRA_MODELS or bool(_CLASS_NAME.match(name))


def label(name: str) -> str:
    return f"hf:{EXTRA_SOURCES.get(name, name)}"


def default_batch_size(name: str, training: bool = False) -> int:
    return 16  # upstream's default for models not in the list


def unavailable_reason() -> Optional[str]:
    try:
        import transformers  # noqa: F401
    except ImportError:
        return f"transformers is not installed for {sys.executable}"
    return None


def sequence_length(name: str) -> int:
    """Upstream's get_sequence_length."""
    if name.startswith("Blenderbot"):
        return 128
    if name.startswith(("GPT2", "Bart", "T5", "PLBart", "MBart")):
        return 1024
    if name in ("AllenaiLongformerBase", "BigBird"):
        return 1024
    if name.startswith("OPT"):
        return 2048
    if "Reformer" in name:
        return 4096
    if name.startswith(("Albert", "Deberta", "Layout", "Electra", "XLNet", "MegatronBert", "Bert",
                        "Roberta")) or name in ("DistillGPT2", "GoogleFnet", "YituTechConvBert"):
        return 512
    if name == "TrOCRForCausalLM":
        return 256
    if name.startswith("MobileBert"):
        return 128
    if name.startswith("Wav2Vec2"):
        return 10000
    return 128


def _zero_dropout_in_config(config) -> None:
    for attr in dir(config):
        if "drop" not in attr or attr.startswith("__"):
            continue
        try:
            value = getattr(config, attr)
        except Exception:
            continue
        if isinstance(value, float):
            try:
                setattr(config, attr, 0.0)
            except Exception:
                pass


def _class_and_config(tf, name: str):
    if name in EXTRA_MODELS:
        make_config, auto_name = EXTRA_MODELS[name]
        return getattr(tf, auto_name), make_config(tf), True
    model_cls = getattr(tf, name, None)
    if model_cls is None:
        raise SourceUnavailable(f"transformers {tf.__version__} has no class {name!r}")
    config = model_cls.config_class()
    if (name in _PAD_TOKEN_CLASSES or name.startswith("Roberta")
            or name.startswith("Marian")):
        config.pad_token_id = 0
    return model_cls, config, False


def _set_attn_implementation(config, impl: str) -> None:
    if impl and impl != "default":
        try:
            config._attn_implementation = impl
        except Exception:
            pass


def build(name: str, ctx) -> ExportableModel:
    reason = unavailable_reason()
    if reason:
        raise SourceUnavailable(reason)
    model = _model(name, ctx)
    seq = ctx.seq_len or sequence_length(name)
    inputs = _Inputs()
    _add_input_ids(inputs, name, model, ctx.batch_size, seq)
    _add_labels(inputs, name, model, ctx.batch_size, seq)
    attn = getattr(model.config, "_attn_implementation", None)
    has_labels = any(n in _LABEL_INPUTS for n in inputs.names)
    return ExportableModel(
        module=FlatOutputs(model, inputs.names), inputs=tuple(inputs.tensors),
        input_specs=inputs.specs, source=label(name), batch_size=ctx.batch_size,
        deepcopy=name not in NO_DEEPCOPY,
        loss="first_output" if has_labels else "mean_of_floating_outputs",
        details={"class": type(model).__name__, "seq_len": seq, "attn_implementation": attn,
                 "use_cache": False})


def _model(name: str, ctx):
    """The transformers model with random weights, dropout 0, no cache."""
    import transformers as tf

    model_cls, config, is_auto = _class_and_config(tf, name)
    _zero_dropout_in_config(config)
    if hasattr(config, "use_cache"):
        config.use_cache = False
    _set_attn_implementation(config, ctx.hf_attn_implementation)
    model = model_cls.from_config(config) if is_auto else model_cls(config)
    if hasattr(model.config, "use_cache"):
        model.config.use_cache = False
    return model


class _Inputs:
    """forward's keyword inputs in order, drawn one after the other from the seeded generator."""

    def __init__(self):
        self.names, self.tensors, self.specs = [], [], []

    def add(self, input_name, tensor, spec):
        self.names.append(input_name)
        self.tensors.append(tensor)
        self.specs.append(spec)

    def draw(self, input_name, shape, init, note=None):
        tensor, spec = make_input(input_name, shape, init, torch.int64, note)
        self.add(input_name, tensor, spec)


def _add_input_ids(inputs: _Inputs, name: str, model, bs: int, seq: int) -> None:
    """upstream's generate_inputs_for_model: input_ids (and decoder_input_ids)."""
    ids_shape = [bs, _NUM_CHOICES, seq] if name.endswith("MultipleChoice") else [bs, seq]
    high = 1 if name.startswith("Roberta") else model.config.vocab_size
    eos_note = None
    if "Bart" in name:
        eos_note = f"last position set to eos_token_id ({model.config.eos_token_id})"
    input_ids, ids_spec = make_input("input_ids", ids_shape, f"randint:0:{high}", torch.int64,
                                     eos_note)
    if "Bart" in name:
        input_ids[:, -1] = model.config.eos_token_id
    inputs.add("input_ids", input_ids, ids_spec)
    if name.startswith(("T5", "M2M100", "MT5")) or \
            type(model).__name__ in _DECODER_INPUT_CLASSES:
        # upstream passes the same tensor twice; a copy keeps the saved inputs free of aliasing
        inputs.add("decoder_input_ids", input_ids.clone(),
                   InputSpec("decoder_input_ids", ids_spec.dtype, list(ids_shape), ids_spec.init,
                             "same values as input_ids"))


def _add_labels(inputs: _Inputs, name: str, model, bs: int, seq: int) -> None:
    """upstream's generate_inputs_for_model(..., include_loss_args=True): the loss's labels."""
    vocab = model.config.vocab_size
    class_name = type(model).__name__
    num_labels = getattr(model.config, "num_labels", 2)
    draw = inputs.draw
    if name.endswith("PreTraining"):
        if class_name in ("ElectraForPreTraining", "LxmertForPreTraining"):
            draw("labels", [bs, seq], "randint:0:1")
        else:
            draw("labels", [bs, seq], f"randint:0:{vocab}")
            label_name = ("sentence_order_label" if class_name == "AlbertForPreTraining"
                          else "next_sentence_label")
            draw(label_name, [bs], "randint:0:1")
    elif name.endswith("QuestionAnswering"):
        draw("start_positions", [bs], f"randint:0:{seq}")
        draw("end_positions", [bs], f"randint:0:{seq}")
    elif name.endswith(("MaskedLM", "HeadModel", "CausalLM", "DoubleHeadsModel")):
        draw("labels", [bs, seq], f"randint:0:{vocab}")
    elif name.endswith("TokenClassification"):
        draw("labels", [bs, seq], f"randint:0:{max(num_labels - 1, 1)}")
    elif name.endswith("MultipleChoice"):
        draw("labels", [bs], f"randint:0:{_NUM_CHOICES}")
    elif name.endswith("SequenceClassification"):
        draw("labels", [bs], f"randint:0:{max(num_labels - 1, 1)}")
    elif name.endswith("NextSentencePrediction"):
        draw("labels", [bs], "randint:0:1")
    elif name.endswith("ForConditionalGeneration"):
        draw("labels", [bs, seq], f"randint:0:{vocab - 1}")
    elif name in EXTRA_MODELS:
        draw("labels", [bs, seq], f"randint:0:{vocab}")
