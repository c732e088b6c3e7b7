"""TorchBench's hf_* models, built offline: the same transformers architecture, batch sizes,
sequence lengths and inputs as the checkout's torchbenchmark/util/framework/huggingface
(model_factory.py, basic_configs.py), with random weights as there. The checkout reads the
configs with AutoConfig.from_pretrained (a download); here they are written out.

TorchBench's inputs (basic_configs.generate_inputs_for_model): eval, input_ids of
[batch, eval length] (and the same tensor as decoder_input_ids for seq2seq models), cut by
CPU_INPUT_SLICE on the CPU; train, input_ids and labels of [batch, train length]. In training
upstream's torchbench.py takes reduce_to_scalar_loss of the model's output as its loss
(torch._dynamo.testing), not the loss the model computes from the labels: for the output types it
names, the mean of the logits. The training module returns what that loss reduces
(UpstreamLossOutputs).
hf_distil_whisper takes input_features [batch, 80, 3000], positionally.

Read from pytorch/benchmark at 0e83c440; tests/python/test_export_torchbench_offline.py
compares this table with a checkout when one is there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

import torch

from ..model_bundle import ExportableModel, FlatOutputs, InputSpec, SourceUnavailable, make_input
from . import huggingface


@dataclass(frozen=True)
class TorchBenchHF:
    auto_class: str                      # transformers' Auto class TorchBench builds with
    config_class: str
    config: Dict[str, Any]               # arguments of config_class (the hub's config.json)
    config_origin: str                   # what TorchBench reads, for the manifest's source
    train_length: int
    eval_length: int
    train_batch: int                     # DEFAULT_TRAIN_BSIZE
    eval_batch: int                      # DEFAULT_EVAL_BSIZE
    cpu_slice: int = 1                   # CPU_INPUT_SLICE: eval length / this on the CPU
    audio: bool = False                  # input_features [batch, 80, 3000] instead of ids


_T5 = dict(vocab_size=32128, d_kv=64, relative_attention_num_buckets=32, dropout_rate=0.1,
           layer_norm_epsilon=1e-6, initializer_factor=1.0, feed_forward_proj="relu",
           is_encoder_decoder=True, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)

MODELS: Dict[str, TorchBenchHF] = {
    "hf_Albert": TorchBenchHF(
        "AutoModelForMaskedLM", "AlbertConfig",
        dict(vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=12,
             num_hidden_groups=1, num_attention_heads=12, intermediate_size=3072,
             inner_group_num=1, hidden_act="gelu_new", hidden_dropout_prob=0.0,
             attention_probs_dropout_prob=0.0, max_position_embeddings=512, type_vocab_size=2,
             initializer_range=0.02, layer_norm_eps=1e-12, classifier_dropout_prob=0.1,
             pad_token_id=0, bos_token_id=2, eos_token_id=3),
        "albert-base-v2", 512, 512, 8, 1),
    "hf_Bart": TorchBenchHF(
        "AutoModelForSeq2SeqLM", "BartConfig",
        dict(vocab_size=50265, max_position_embeddings=1024, d_model=768, encoder_layers=6,
             decoder_layers=6, encoder_attention_heads=12, decoder_attention_heads=12,
             encoder_ffn_dim=3072, decoder_ffn_dim=3072, activation_function="gelu",
             dropout=0.1, attention_dropout=0.1, activation_dropout=0.1, init_std=0.02,
             scale_embedding=False, num_labels=3, pad_token_id=1, bos_token_id=0,
             eos_token_id=2, decoder_start_token_id=2, forced_bos_token_id=0,
             forced_eos_token_id=2),
        "facebook/bart-base", 512, 512, 4, 1),
    "hf_Bert": TorchBenchHF("AutoModelForMaskedLM", "BertConfig", {}, "BertConfig()",
                            512, 512, 4, 1),
    "hf_Bert_large": TorchBenchHF(
        "AutoModelForMaskedLM", "BertConfig",
        dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16),
        "BertConfig(1024 hidden, 24 layers, 16 heads)",
        512, 512, 4, 1),
    "hf_BigBird": TorchBenchHF("AutoModelForMaskedLM", "BigBirdConfig",
                               dict(attention_type="block_sparse"),
                               "BigBirdConfig(block_sparse)",
                               1024, 4096, 2, 1, cpu_slice=5),
    "hf_DistilBert": TorchBenchHF(
        "AutoModelForMaskedLM", "DistilBertConfig",
        dict(vocab_size=30522, max_position_embeddings=512, sinusoidal_pos_embds=False,
             n_layers=6, n_heads=12, dim=768, hidden_dim=3072, dropout=0.1,
             attention_dropout=0.1, activation="gelu", initializer_range=0.02, qa_dropout=0.1,
             seq_classif_dropout=0.2, pad_token_id=0),
        "distilbert-base-uncased", 512, 512, 8, 1),
    "hf_distil_whisper": TorchBenchHF(
        "AutoModelForAudioClassification", "WhisperConfig",
        dict(vocab_size=51864, num_mel_bins=80, d_model=1024, encoder_layers=24,
             encoder_attention_heads=16, decoder_layers=2, decoder_attention_heads=16,
             encoder_ffn_dim=4096, decoder_ffn_dim=4096, activation_function="gelu",
             dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.02,
             scale_embedding=False, max_source_positions=1500, max_target_positions=448,
             pad_token_id=50256, bos_token_id=50257, eos_token_id=50256,
             decoder_start_token_id=50257, classifier_proj_size=256,
             use_weighted_layer_sum=False),
        "distil-whisper/distil-medium.en", 1024, 1024, 8, 1, audio=True),
    "hf_GPT2_large": TorchBenchHF(
        "AutoModelForCausalLM", "GPT2Config",
        dict(vocab_size=50257, n_positions=1024, n_embd=1280, n_layer=36, n_head=20,
             activation_function="gelu_new", resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
             layer_norm_epsilon=1e-5, initializer_range=0.02, bos_token_id=50256,
             eos_token_id=50256),
        "gpt2-large", 512, 1024, 4, 1),
    "hf_T5_base": TorchBenchHF(
        "AutoModelForSeq2SeqLM", "T5Config",
        dict(_T5, d_model=768, d_ff=3072, num_layers=12, num_decoder_layers=12, num_heads=12),
        "t5-base", 1024, 2048, 8, 1),
    "hf_T5_large": TorchBenchHF(
        "AutoModelForSeq2SeqLM", "T5Config",
        dict(_T5, d_model=1024, d_ff=4096, num_layers=24, num_decoder_layers=24, num_heads=16),
        "t5-large", 512, 512, 2, 1),
}
WHISPER_FEATURES = (80, 3000)  # the checkout's hf_distil_whisper: feature_size, sequence_length


def provides(name: str) -> bool:
    return name in MODELS


def label(name: str) -> str:
    entry = MODELS[name]
    return f"hf:{entry.auto_class}({entry.config_origin})"


def default_batch_size(name: str, training: bool = False) -> int:
    entry = MODELS[name]
    return entry.train_batch if training else entry.eval_batch


def unavailable_reason() -> Optional[str]:
    return huggingface.unavailable_reason()


def sequence_length(name: str, training: bool, device: str) -> int:
    """basic_configs.generate_inputs_for_model's max_length, with its CPU cut."""
    entry = MODELS[name]
    if training:
        return entry.train_length
    if device == "cpu" and entry.cpu_slice > 1:
        return int(entry.eval_length / entry.cpu_slice)
    return entry.eval_length


# The ModelOutput types that torch._dynamo.testing.reduce_to_scalar_loss reduces to their logits;
# any other mapping it averages over all its values.
LOGITS_LOSS_OUTPUTS = ("MaskedLMOutput", "Seq2SeqLMOutput", "CausalLMOutputWithCrossAttentions")


class UpstreamLossOutputs(FlatOutputs):
    """Training: the outputs upstream's torchbench loss reduces, so that zoobench's
    mean_of_floating_outputs is upstream's reduce_to_scalar_loss(model output): the logits alone
    for LOGITS_LOSS_OUTPUTS (the model's own loss from the labels is computed, as upstream's
    is, and not used), every tensor otherwise."""

    def named_outputs(self, out: Any):
        if type(out).__name__ in LOGITS_LOSS_OUTPUTS:
            return [("logits", out.logits)]
        return super().named_outputs(out)


def input_plan(name: str, batch: int, training: bool, device: str, vocab_size: int):
    """[(input name, shape, init)] in forward's order, as TorchBench makes them."""
    entry = MODELS[name]
    if entry.audio:
        return [("input_features", [batch, *WHISPER_FEATURES], "randn")]
    length = sequence_length(name, training, device)
    ids = ("input_ids", [batch, length], f"randint:0:{vocab_size}")
    if training:
        return [ids, ("labels", [batch, length], f"randint:0:{vocab_size}")]
    if entry.auto_class == "AutoModelForSeq2SeqLM":
        return [ids, ("decoder_input_ids", [batch, length], "same as input_ids")]
    return [ids]


def make_config(tf, name: str):
    entry = MODELS[name]
    config_cls = getattr(tf, entry.config_class, None)
    if config_cls is None:
        raise SourceUnavailable(f"transformers {tf.__version__} has no {entry.config_class}")
    return huggingface._config(config_cls, **entry.config)


def build(name: str, ctx) -> ExportableModel:
    reason = unavailable_reason()
    if reason:
        raise SourceUnavailable(reason)
    import transformers as tf

    entry = MODELS[name]
    config = make_config(tf, name)
    huggingface._zero_dropout_in_config(config)
    if hasattr(config, "use_cache"):
        config.use_cache = False  # as TorchBench: "Turning off kv cache for torchbench models"
    huggingface._set_attn_implementation(config, ctx.hf_attn_implementation)
    model = getattr(tf, entry.auto_class).from_config(config)
    if hasattr(model.config, "use_cache"):
        model.config.use_cache = False

    names: List[str] = []
    tensors: List[torch.Tensor] = []
    specs: List[InputSpec] = []
    for input_name, shape, init in input_plan(name, ctx.batch_size, ctx.training, ctx.device,
                                              model.config.vocab_size):
        if init == "same as input_ids":
            # TorchBench passes the same tensor twice; a copy keeps inputs.pt free of aliasing
            tensor = tensors[0].clone()
            spec = InputSpec(input_name, specs[0].dtype, shape, specs[0].init,
                             "same values as input_ids")
        elif init == "randn":
            tensor, spec = make_input(input_name, shape, "randn")
        else:
            tensor, spec = make_input(input_name, shape, init, torch.int64)
        names.append(input_name)
        tensors.append(tensor)
        specs.append(spec)
    wrapper = UpstreamLossOutputs if ctx.training else FlatOutputs
    return ExportableModel(
        module=wrapper(model, names), inputs=tuple(tensors), input_specs=specs,
        source=label(name), batch_size=ctx.batch_size, loss="mean_of_floating_outputs",
        details={"class": type(model).__name__, "config": entry.config_origin,
                 "seq_len": None if entry.audio else
                 sequence_length(name, ctx.training, ctx.device),
                 "attn_implementation": getattr(model.config, "_attn_implementation", None),
                 "use_cache": False, "torchbench_model": name})
