"""Direct logit attribution (Elhage et al. 2021; nostalgebraist 2020's logit lens read one part at a time): how much of
the next token's logit each head and each MLP writes straight into the residual stream at the last position.

The residual stream at the last position is a sum, final = embedding + Σ heads + Σ MLPs, and the logit of token t is
g ⊙ W_U[t] · final / rms(final) (the final RMSNorm, then the output matrix). With rms(final) held at its value, that is
linear in `final`, so each part's dot product with the direction g ⊙ W_U[t] / rms(final) is its direct contribution,
and the contributions sum exactly to the logit (an RMSNorm subtracts no mean, so no part is moved by the others).
"Direct": what a head writes that later blocks read and transform counts towards those blocks, not towards the head.

Shapes: L blocks, H heads per block, T positions, d width, d_k head width.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:  # only a type here: the adapters package imports every family
    from model.adapters.protocols import ReadsResidualStream


@dataclass(frozen=True)
class LogitAttribution:
    """Each part's direct contribution to one token's logit at the last position of a text."""

    tokens: list[str]  # (T,)
    token_id: int  # the token attributed: by default the model's top next token after the text
    position: int  # the position read (the last, T−1)
    embedding: float  # the token embeddings' direct contribution to that logit
    heads: np.ndarray  # (L, H) float32: each head's direct contribution (its slice of o_proj)
    mlps: np.ndarray  # (L,) float32: each block's MLP
    logit: float  # the token's logit; embedding + heads.sum() + mlps.sum() equals it within 1e-3
    attention_to_first: np.ndarray  # (L, H) float32: each head's weight from `position` to position 0 (sinks)


def direct_logit_attribution(lab: ReadsResidualStream, text: str, token_id: int | None = None) -> LogitAttribution:
    """The embedding's, every head's and every MLP's direct contribution to the logit of token_id (by default the
    model's most likely next token) after the text, from one run of the blocks."""
    parts = lab.position_parts(text, -1)
    with torch.no_grad():
        logits = lab.unembed(parts.final).float()  # (V,) the model's own next-token logits
        chosen = int(logits.argmax()) if token_id is None else token_id
        direction = lab.logit_direction(parts.final, chosen)  # (d,)
        heads = parts.heads @ direction  # (L, H)
        mlps = parts.mlps @ direction  # (L,)
        embedding = parts.embedding @ direction
    return LogitAttribution(list(parts.tokens), chosen, parts.position, float(embedding),
                            heads.float().cpu().numpy().astype(np.float32), mlps.float().cpu().numpy().astype(np.float32),
                            float(logits[chosen]), parts.attention[:, :, 0].float().cpu().numpy().astype(np.float32))
