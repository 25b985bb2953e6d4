"""Our GRU seq2seq pair as LabModels: with Bahdanau attention (one alignment (T_out, T_src)) or without; no heads."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.adapters.base import Adapter, ClosedVocabulary, family
from model.adapters.protocols import SwitchedOff
from model.capabilities import ALIGNMENT, STEPS, TRAINING, TRANSLATION, VOCABULARY
from model.decode import greedy_decode
from model.sources import AnalysedInput, analyse_toy


@family("bahdanau", "no-attention")
@dataclass(eq=False)
class Seq2SeqAdapter(ClosedVocabulary, Adapter):
    """A GRU encoder-decoder: a translation step by step, its alignment (if any) shown as such, not as heads."""

    CAPABILITIES = frozenset({TRANSLATION, STEPS, VOCABULARY, TRAINING})  # no KINDS: no heads, layout {}
    POSITIONS = "recurrence"

    def declared_capabilities(self) -> frozenset[str]:
        """With attention ("bahdanau"), its one alignment; without ("no-attention"), no map at all."""
        return self.CAPABILITIES | ({ALIGNMENT} if self.family == "bahdanau" else set())

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        self.head_masks(switched_off)  # ValueError: no heads to switch off
        return self._analysed(analyse_toy(self.model_id, text, greedy_decode(self.network, text)))

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        return {}
