"""Our translators as LabModels: the encoder-decoder Transformer and the decoder-only translator (a LoadedModel of
model/transformer.py or model/decoder_only.py, shipped or trained in the app)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.adapters.base import Adapter, ClosedVocabulary, curve_counts, family
from model.adapters.protocols import ImportanceReport, SwitchedOff
from model.capabilities import ABLATION, IMPORTANCE, NORMS, PATTERNS, RESCALE, STEPS, TRAINING, TRANSLATION, VOCABULARY
from model.data import BOS_ID
from model.decode import greedy_decode
from model.explain.explanations import decoder_only_explanations, transformer_explanations
from model.explain.fixed_sets import held_out_pairs
from model.explain.importance import evaluation_set, head_importance, pruning_curve
from model.explain.patterns import PatternScores, labelling_sentences, transformer_head_labels
from model.sources import KIND_NAMES, AnalysedInput, analyse_causal_translation, analyse_toy
from model.transformer import HeadMasks


def _teacher_forced(analysed: AnalysedInput, loaded, explanations) -> dict[str, np.ndarray]:
    """A translation's explanations (model.explain.explanations: weights, value norms, rollout) from one
    teacher-forced pass over the source and the output greedy decoding wrote; the batch of one dropped."""
    result = analysed.decode
    device = next(loaded.model.parameters()).device
    src = torch.tensor([result.source.ids], device=device)
    tgt_in = torch.tensor([[BOS_ID] + loaded.tgt_vocab.encode(result.output_tokens)[0]], device=device)
    return {name: value[:, 0] for name, value in explanations(loaded.model, src, tgt_in).items()}


@family("transformer")
@dataclass(eq=False)
class TranslatorAdapter(ClosedVocabulary, Adapter):
    """Our encoder-decoder Transformer (a shipped or trained LoadedModel): every capability."""

    KINDS = KIND_NAMES
    CAPABILITIES = frozenset({ABLATION, RESCALE, TRANSLATION, STEPS, NORMS, IMPORTANCE, PATTERNS, VOCABULARY,
                              TRAINING})
    POSITIONS = "table"
    LABEL_SENTENCES = 100  # held-out sentences its pattern labels are read from

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        masks = self.head_masks(switched_off)
        head_masks = None if masks is None else HeadMasks(**masks)
        return self._analysed(analyse_toy(self.model_id, text, greedy_decode(self.network, text,
                                                                             head_masks=head_masks)))

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Weights and value norms (L, h, T_q, T_k), rollout_<kind> (L, T, T) of the translation, teacher-forced."""
        return _teacher_forced(analysed, self.network, transformer_explanations)

    def importance(self) -> ImportanceReport:
        """HeadImportance on the 300 held-out sentences; the curve's points {k, exact_match, loss}."""
        evaluation = evaluation_set(self.network, held_out_pairs(self.network))
        importance = head_importance(self.network.model, evaluation)
        counts = curve_counts(len(importance.heads))
        return ImportanceReport(importance, pruning_curve(self.network.model, evaluation, importance, counts))

    def labels(self) -> dict[str, PatternScores]:
        sentences = labelling_sentences(self.network, held_out_pairs(self.network, self.LABEL_SENTENCES))
        return transformer_head_labels(self.network.model, sentences)

    def position_table(self) -> torch.nn.Module:
        """The encoder's position table (model.positional.summarize_position_table reads it)."""
        return self.network.model.src_pos


@family("decoder-only")
@dataclass(eq=False)
class DecoderOnlyAdapter(ClosedVocabulary, Adapter):
    """Our decoder-only translator (a shipped or trained LoadedModel of model/decoder_only.py): one causal
    self-attention map per layer, decoder_self (L, h, N, N), over "<bos> english ⟶ french"; the query rows after
    "⟶" are the French tokens, and their columns before it the English block, where the encoder-decoder's
    cross-attention looks. Ablation, rescale, raw weights, rollout and value norms; no step-by-step decoding page
    (it draws cross-attention), no head importance or pattern labels (written for the encoder-decoder)."""

    KINDS = ("decoder_self",)
    CAPABILITIES = frozenset({ABLATION, RESCALE, TRANSLATION, NORMS, VOCABULARY, TRAINING})
    POSITIONS = "table"

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        masks = self.head_masks(switched_off)
        head_masks = None if masks is None else HeadMasks(**masks)
        return analyse_causal_translation(self.model_id, text,
                                          greedy_decode(self.network, text, head_masks=head_masks),
                                          self.capabilities)

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """decoder_self and value_norms_decoder_self (L, h, N, N), rollout_decoder_self (L, N, N) of the translation
        read as one sequence (teacher-forced: the same pass greedy decoding ended with)."""
        return _teacher_forced(analysed, self.network, decoder_only_explanations)

    def position_table(self) -> torch.nn.Module:
        """The one position table of the packed sequence (model.positional.summarize_position_table reads it)."""
        return self.network.model.pos
