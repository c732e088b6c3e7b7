"""A BERT-style masked-LM text encoder built only from torch.nn's modules (token and position
nn.Embedding, nn.TransformerEncoder, a masked-LM head). It is the NLP model of machines where
transformers is not installed (Debian packages neither transformers nor a working torchtext).

  text_encoder_bert          BERT-base size: 12 layers, hidden 768, 12 heads, vocab 30522
  text_encoder_bert_dropout  the same with dropout 0.1 kept active in train.pt (packed dropout)
  text_encoder_small         2 layers, hidden 256, 4 heads, vocab 4096, seq 64 (the CPU demo)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn

from ..model_bundle import ExportableModel, make_input


@dataclass(frozen=True)
class EncoderSize:
    vocab: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    seq_len: int
    batch_size: int
    dropout: float = 0.0


VARIANTS = {
    "text_encoder_bert": EncoderSize(30522, 768, 12, 12, 3072, 512, 512, 8),
    "text_encoder_bert_dropout": EncoderSize(30522, 768, 12, 12, 3072, 512, 512, 8, dropout=0.1),
    "text_encoder_small": EncoderSize(4096, 256, 2, 4, 1024, 512, 64, 2),
}


def provides(name: str) -> bool:
    return name in VARIANTS


def label(name: str) -> str:
    return f"text_encoder:{name}"


def default_batch_size(name: str, training: bool = False) -> int:
    return VARIANTS[name].batch_size


def unavailable_reason() -> Optional[str]:
    return None


class TextEncoderForMaskedLM(nn.Module):
    """input_ids[B,S] (int64) -> logits[B,S,vocab]."""

    def __init__(self, size: EncoderSize):
        super().__init__()
        self.token_embedding = nn.Embedding(size.vocab, size.hidden)
        self.position_embedding = nn.Embedding(size.max_positions, size.hidden)
        # A buffer, not torch.arange in forward: tracing would bake arange's device into the graph.
        self.register_buffer("position_ids", torch.arange(size.max_positions).unsqueeze(0))
        self.embedding_norm = nn.LayerNorm(size.hidden, eps=1e-12)
        self.embedding_dropout = nn.Dropout(size.dropout)
        layer = nn.TransformerEncoderLayer(size.hidden, size.heads, size.ffn, size.dropout,
                                           activation="gelu", layer_norm_eps=1e-12,
                                           batch_first=True)
        # No nested tensors: the graph must be plain dense ops that LibTorch 1.13 and 2.x run.
        self.encoder = nn.TransformerEncoder(layer, size.layers, enable_nested_tensor=False)
        self.mlm_dense = nn.Linear(size.hidden, size.hidden)
        self.mlm_activation = nn.GELU()
        self.mlm_norm = nn.LayerNorm(size.hidden, eps=1e-12)
        self.mlm_decoder = nn.Linear(size.hidden, size.vocab)
        self.mlm_decoder.weight = self.token_embedding.weight  # tied, as in BERT
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = self.position_ids[:, : input_ids.size(1)]
        x = self.token_embedding(input_ids) + self.position_embedding(positions)
        x = self.embedding_dropout(self.embedding_norm(x))
        x = self.encoder(x)
        return self.mlm_decoder(self.mlm_norm(self.mlm_activation(self.mlm_dense(x))))


def build(name: str, ctx) -> ExportableModel:
    size = VARIANTS[name]
    seq_len = ctx.seq_len or size.seq_len
    if seq_len > size.max_positions:
        raise ValueError(f"--seq-len {seq_len} exceeds {name}'s {size.max_positions} positions")
    model = TextEncoderForMaskedLM(size)
    ids, spec = make_input("input_ids", [ctx.batch_size, seq_len], f"randint:0:{size.vocab}")
    return ExportableModel(
        module=model, inputs=(ids,), input_specs=[spec], source=label(name),
        batch_size=ctx.batch_size, output_names=["logits"], keep_dropout=size.dropout > 0,
        details={"vocab": size.vocab, "hidden": size.hidden, "layers": size.layers,
                 "heads": size.heads, "seq_len": seq_len, "dropout_p": size.dropout})
