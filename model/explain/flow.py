"""An information-flow graph of one text (Ferrando & Voita 2024, "Information flow routes", §2-3), its edges weighed by
the norm-based contributions of Kobayashi et al. 2020 (§3, eq. 6-8): which attention heads carry which position's
residual into which later position, and how much of each residual the MLPs write.

Nodes are (row, position): row 0 the token embeddings, row l the output of block l (as the logit lens's rows). Block l
adds, at position i, its heads' outputs to the residual entering it, x_i:

    y_i = x_i + Σ_h Σ_j z^h_ij,   z^h_ij = A^h_ij · f_h(x_j),   f_h(x_j) = v_j W_O^h        (no bias in Llama)

and then its MLP's output m_i (read from y_i): row l at i is y_i + m_i. Each part's contribution is its Euclidean
norm, ‖z^h_ij‖ = A^h_ij · ‖f_h(x_j)‖ (Kobayashi's value-weighted norm, model/explain/value_norms.py), and each part's
share of node (l, i) is its norm over the sum of the norms of all the parts added there:

    Z_i = ‖x_i‖ + Σ_h Σ_j ‖z^h_ij‖,   edge (l−1, j) → (l, i) = Σ_h ‖z^h_ij‖ / Z_i  (the sum over heads),
    residual edge (l−1, i) → (l, i) = ‖x_i‖ / Z_i,   MLP share at (l, i) = ‖m_i‖ / (‖y_i‖ + ‖m_i‖).

A node's incoming shares sum to 1, so one threshold reads every layer alike (Ferrando & Voita's proportions; they
measure each part by its proximity to the sum, we by its norm, which needs no (T × T × d) tensor). The MLP reads y_i,
so it passes on what y_i carries: its share is drawn on the node and is no edge of its own.

The relevance of each node to the last position's output, R (L+1, T), follows the shares down from R[L] = 1 at the
last position: R[l−1, j] = Σ_i R[l, i] · share(l, i ← j), residual included, so each row of R sums to 1 (attention
rollout, Abnar & Zuidema 2020, on these shares). The route to the prediction is Ferrando & Voita's §3 algorithm: from
the last position's top node, keep every edge whose share is at least τ into a node already kept, row by row down.

Shapes: L blocks, h heads, T positions (the text's first FLOW_MAX_TOKENS tokens), d width.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:  # only a type here: the adapters package imports every family
    from model.adapters.protocols import ReadsResidualStream

# The longest text the graph reads: the kept contributions are (L, h, T, T) floats, 18 MiB at 128 tokens for SmolLM2.
FLOW_MAX_TOKENS = 128
PROMOTED_TOKENS = 5  # a node's lens: this many tokens its residual promotes most, and as many it suppresses most


@dataclass(frozen=True)
class InformationFlow:
    """The norm-based contributions of one text (module docstring), and the shares, relevance and route read from
    them."""

    ids: list[int]  # (T,)
    tokens: list[str]  # (T,)
    heads: np.ndarray  # (L, h, T, T) float32: ‖z^h_ij‖ = A^h_ij ‖f_h(x_j)‖, block l's head h from key j to query i
    residual: np.ndarray  # (L, T) float32: ‖x_i‖, the residual entering block l
    mixed: np.ndarray  # (L, T) float32: ‖y_i‖, the residual after block l's attention (what its MLP reads)
    mlp: np.ndarray  # (L, T) float32: ‖m_i‖, block l's MLP output
    predicted: int  # the model's own next token after the text (its last output through the final norm and W_U)

    @property
    def totals(self) -> np.ndarray:
        """(L, T): Z_i, the sum of the norms of the residual and of every head's part from every key."""
        return self.residual + self.heads.sum(axis=(1, 3))

    @property
    def edges(self) -> np.ndarray:
        """(L, T, T) float32: the share of node (l+1, i) that block l's heads carry from node (l, j), summed over
        heads (0 for a key after the query)."""
        return (self.heads.sum(axis=1) / self.totals[:, :, None]).astype(np.float32)

    @property
    def residual_shares(self) -> np.ndarray:
        """(L, T) float32: the share of node (l+1, i) that comes straight up the residual stream from (l, i)."""
        return (self.residual / self.totals).astype(np.float32)

    @property
    def mlp_shares(self) -> np.ndarray:
        """(L, T) float32: ‖m_i‖ / (‖y_i‖ + ‖m_i‖), how much of node (l+1, i) block l's MLP writes."""
        return (self.mlp / (self.mixed + self.mlp)).astype(np.float32)

    @property
    def head_shares(self) -> np.ndarray:
        """(L, h, T) float32: the share of node (l+1, i) that each head of block l carries, from all its keys."""
        return (self.heads.sum(axis=3) / self.totals[:, None, :]).astype(np.float32)

    def relevance(self) -> np.ndarray:
        """(L+1, T) float32: R, each node's share in the last position's output (module docstring); rows sum to 1."""
        return flow_relevance(self.edges, self.residual_shares)

    def head_flow(self) -> np.ndarray:
        """(L, h, T) float32: the share of the last position's output that head h of block l carries from position j
        (to any query, weighed by that query's relevance): Σ_i R[l+1, i] · ‖z^h_ij‖ / Z_i."""
        weight = self.relevance()[1:] / self.totals  # (L, T): R[l+1, i] / Z_i
        return np.einsum("li,lhij->lhj", weight, self.heads).astype(np.float32)

    def mlp_flow(self) -> np.ndarray:
        """(L, T) float32: the share of the last position's output that block l's MLP writes at position j:
        R[l+1, j] · MLP share (l+1, j)."""
        return (self.relevance()[1:] * self.mlp_shares).astype(np.float32)


def flow_relevance(edges: np.ndarray, residual_shares: np.ndarray) -> np.ndarray:
    """edges (L, T, T) and residual_shares (L, T) (InformationFlow's) -> R (L+1, T) float32, R[L] = 1 at the last
    position, R[l−1, j] = Σ_i R[l, i] · share(l, i ← j), the residual edge included."""
    edges, straight = np.asarray(edges, dtype=np.float64), np.asarray(residual_shares, dtype=np.float64)
    layers, length = straight.shape
    kept = np.zeros((layers + 1, length))
    kept[layers, length - 1] = 1.0
    for layer in range(layers - 1, -1, -1):
        kept[layer] = kept[layer + 1] @ edges[layer] + kept[layer + 1] * straight[layer]
    return kept.astype(np.float32)


def flow_route(edges: np.ndarray, residual_shares: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Ferrando & Voita's route to the prediction at threshold τ: (edges (L, T, T) bool, residual (L, T) bool), the
    attention edges (l, j) → (l+1, i) and residual edges (l, i) → (l+1, i) of share ≥ τ kept, from the last
    position's top node down, each into a node already on the route."""
    edges, straight = np.asarray(edges) >= threshold, np.asarray(residual_shares) >= threshold
    layers, length = straight.shape
    reached = np.zeros(length, dtype=bool)
    reached[length - 1] = True  # the top node, row L
    kept_edges, kept_straight = np.zeros_like(edges), np.zeros_like(straight)
    for layer in range(layers - 1, -1, -1):
        kept_edges[layer] = edges[layer] & reached[:, None]
        kept_straight[layer] = straight[layer] & reached
        reached = kept_edges[layer].any(axis=0) | kept_straight[layer]  # the nodes of row `layer` on the route
    return kept_edges, kept_straight


def information_flow(lab: ReadsResidualStream, text: str) -> InformationFlow:
    """The norm-based contributions of every head, residual and MLP in the text's first FLOW_MAX_TOKENS tokens, from
    one run of the blocks (lab.block_parts)."""
    ids = lab.encode(text)[:FLOW_MAX_TOKENS]
    heads, residual, mixed, mlp = [], [], [], []
    with torch.no_grad():
        for parts in lab.block_parts(text, FLOW_MAX_TOKENS):
            written = parts.written.float().norm(dim=-1)  # (h, T): ‖f_h(x_j)‖
            heads.append(parts.weights.float() * written[:, None, :])  # (h, T_i, T_j)
            residual.append(parts.entering.norm(dim=-1))
            mixed.append((parts.entering + parts.attention).norm(dim=-1))
            mlp.append(parts.mlp.norm(dim=-1))
            final = parts.entering[-1] + parts.attention[-1] + parts.mlp[-1]  # (d,) the last block's output at T−1
        predicted = int(lab.unembed(final).argmax())

    def stacked(rows: list[torch.Tensor]) -> np.ndarray:
        return torch.stack(rows).float().cpu().numpy().astype(np.float32)
    return InformationFlow(ids, lab.token_texts(ids), stacked(heads), stacked(residual), stacked(mixed),
                           stacked(mlp), predicted)


@dataclass(frozen=True)
class NodeLens:
    """The logit lens at one node: its residual through the final norm and the output matrix."""

    row: int  # 0 the embeddings, l the output of block l
    position: int
    promoted: list[int]  # the PROMOTED_TOKENS token ids of highest logit, highest first
    promoted_probs: np.ndarray  # (k,) float32: their probabilities
    suppressed: list[int]  # the PROMOTED_TOKENS token ids of lowest logit, lowest first
    suppressed_logits: np.ndarray  # (k,) float32: their logits


def node_lens(lab: ReadsResidualStream, text: str, row: int, position: int, k: int = PROMOTED_TOKENS) -> NodeLens:
    """The tokens that node (row, position)'s residual promotes and suppresses most (the text's first FLOW_MAX_TOKENS
    tokens, as the graph reads them)."""
    if not 0 <= position < min(len(lab.encode(text)), FLOW_MAX_TOKENS):
        raise ValueError(f"position {position} is not one of the graph's")
    stream = lab.residual_stream(text)  # causal: its first FLOW_MAX_TOKENS positions are the graph's own
    with torch.no_grad():
        logits = lab.unembed(stream.hidden[row, position]).float()  # (V,)
        top, bottom = logits.topk(k), logits.topk(k, largest=False)
        probs = torch.softmax(logits, dim=-1)[top.indices]
    return NodeLens(row, position, top.indices.tolist(), probs.cpu().numpy().astype(np.float32),
                    bottom.indices.tolist(), bottom.values.cpu().numpy().astype(np.float32))
