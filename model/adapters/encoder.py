"""A BERT encoder on our own MultiHeadAttention as a LabModel (all-MiniLM-L6-v2, BERT folders)."""
from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Sequence

import numpy as np
import torch

from model.adapters.base import Adapter, curve_counts, family
from model.adapters.protocols import ImportanceReport, SwitchedOff
from model.capabilities import ABLATION, EMBEDDING, IMPORTANCE, NORMS, PATTERNS, RESCALE
from model.explain.explanations import encoder_explanations
from model.explain.fixed_sets import ENCODER_SENTENCES
from model.explain.importance import encoder_importance, encoder_pruning_curve
from model.explain.patterns import PatternScores, encoder_head_labels
from model.readable_sentence import word_vectors
from model.sources import AnalysedInput, analyse_encoder


@family("bert")
@dataclass(eq=False)
class EncoderAdapter(Adapter):
    """Self-attention only, over the text's real subword tokens, with its special tokens and sentence embedding."""

    KINDS = ("encoder_self",)
    CAPABILITIES = frozenset({ABLATION, RESCALE, EMBEDDING, NORMS, IMPORTANCE, PATTERNS})
    POSITIONS = "learned"
    LABEL_SENTENCES = len(ENCODER_SENTENCES)

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        masks = self.head_masks(switched_off)
        head_mask = None if masks is None else masks["encoder_self"]
        return self._analysed(analyse_encoder(self.model_id, text, self.network, head_mask))

    def weights(self) -> torch.nn.Module:
        return self.network.encoder

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        """(n, d) unit-length vectors of single words, mean-pooled over their pieces (EmbedsWords)."""
        return word_vectors(self.network, words)

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Weights, value norms (L, h, T, T) and rollout (L, T, T) over the text's raw tokens."""
        return encoder_explanations(self.network, self.network.encode(analysed.text))

    def importance(self) -> ImportanceReport:
        """EncoderImportance over ENCODER_SENTENCES; the curve's points {k, similarity}."""
        importance = encoder_importance(self.network)
        return ImportanceReport(importance, encoder_pruning_curve(self.network, importance,
                                                                  curve_counts(importance.change.size)))

    def labels(self) -> dict[str, PatternScores]:
        return {"encoder_self": encoder_head_labels(self.network)}
