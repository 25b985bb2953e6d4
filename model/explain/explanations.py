"""One text through a model -> every per-text array the Explain view draws: raw weights, value-weighted norms
(value_norms.py) and rollout (rollout.py), as numpy arrays keyed "<kind>", "value_norms_<kind>", "rollout_<kind>"."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from model.explain.kinds import ATTENTION_KINDS, SELF_KINDS
from model.explain.rollout import attention_rollout
from model.explain.value_norms import (capture_attention_inputs, encoder_attention_modules, stack_value_norms,
                                       transformer_attention_modules)


@torch.no_grad()
def transformer_explanations(model, src: torch.Tensor, tgt_in: torch.Tensor) -> dict[str, np.ndarray]:
    """One teacher-forced pass of the encoder-decoder Transformer (eval mode) -> numpy arrays:

    <kind> (L, B, h, T_q, T_k) raw weights, value_norms_<kind> likewise, for kind in encoder_self, decoder_self,
    cross; rollout_<kind> (L, B, T, T) for the two self-attention kinds.
    """
    modules = transformer_attention_modules(model)
    with capture_attention_inputs(modules) as captured:
        _, maps = model(src, tgt_in, need_weights=True)
    out: dict[str, np.ndarray] = {}
    for kind in ATTENTION_KINDS:
        weights = getattr(maps, kind)  # (L, B, h, T_q, T_k)
        layers = weights.shape[0]
        kind_modules = [modules[f"{kind}.{l}"] for l in range(layers)]
        out[kind] = weights.cpu().numpy()
        out[f"value_norms_{kind}"] = stack_value_norms(kind_modules, weights,
                                                       [captured[f"{kind}.{l}"][0] for l in range(layers)])
        if kind in SELF_KINDS:
            out[f"rollout_{kind}"] = np.stack([attention_rollout(out[kind][:, b]) for b in range(src.size(0))], 1)
    return out


@torch.no_grad()
def decoder_only_explanations(model, src: torch.Tensor, tgt_in: torch.Tensor) -> dict[str, np.ndarray]:
    """One teacher-forced pass of the decoder-only translator (model/decoder_only.py, eval mode) -> numpy arrays of
    its one kind over the packed sequence "<bos> english ⟶ french" (N tokens):

    decoder_self (L, B, h, N, N) raw weights, value_norms_decoder_self likewise, rollout_decoder_self (L, B, N, N).
    """
    modules = {str(l): layer.self_attn for l, layer in enumerate(model.layers)}
    with capture_attention_inputs(modules) as captured:
        _, maps = model(src, tgt_in, need_weights=True)
    weights = maps.decoder_self  # (L, B, h, N, N)
    raw = weights.cpu().numpy()
    norms = stack_value_norms(list(modules.values()), weights, [captured[str(l)][0] for l in range(len(modules))])
    rollout = np.stack([attention_rollout(raw[:, b]) for b in range(src.size(0))], 1)
    return {"decoder_self": raw, "value_norms_decoder_self": norms, "rollout_decoder_self": rollout}


def analysis_arrays(model, src_ids: Sequence[int], tgt_in_ids: Sequence[int]) -> dict[str, np.ndarray]:
    """For `python -m model.inspect --out FILE.npz`: one sentence (ids without padding) through a Transformer.

    rollout_encoder_self, rollout_decoder_self: (L, T, T), the rolled-out matrix after each layer;
    value_norms_encoder_self, value_norms_decoder_self, value_norms_cross: (L, h, T_q, T_k).
    """
    device = next(model.parameters()).device
    arrays = transformer_explanations(model, torch.tensor([list(src_ids)], device=device),
                                      torch.tensor([list(tgt_in_ids)], device=device))
    out = {f"rollout_{kind}": arrays[f"rollout_{kind}"][:, 0] for kind in SELF_KINDS}
    out.update({f"value_norms_{kind}": arrays[f"value_norms_{kind}"][:, 0] for kind in ATTENTION_KINDS})
    return out


@torch.no_grad()
def encoder_explanations(pretrained, encoded) -> dict[str, np.ndarray]:
    """One text through a PretrainedEncoder (model.bert) -> numpy arrays for its encoder_self kind:

    encoder_self (L, h, T, T) raw weights, value_norms_encoder_self (L, h, T, T), rollout_encoder_self (L, T, T).
    The value inputs x_j are captured at each layer's attention (hooks), not re-derived from the model's layout.
    """
    modules = encoder_attention_modules(pretrained.encoder)
    with capture_attention_inputs({str(l): m for l, m in enumerate(modules)}) as captured:
        out = pretrained.run(encoded)
    weights = out.weights  # (L, 1, h, T, T)
    norms = stack_value_norms(modules, weights, [captured[str(l)][0] for l in range(len(modules))])
    raw = weights[:, 0].cpu().numpy()
    return {"encoder_self": raw, "value_norms_encoder_self": norms[:, 0],
            "rollout_encoder_self": attention_rollout(raw)}
