"""A models-folder entry run through the `transformers` library (GPT-2, BART, ...) as a LabModel."""
from __future__ import annotations

from dataclasses import dataclass

from model.adapters.base import Adapter, family
from model.adapters.protocols import SwitchedOff
from model.capabilities import TRANSLATION
from model.sources import AnalysedInput


@family("transformers")
@dataclass(eq=False)
class TransformersAdapter(Adapter):
    """Raw weights and rollout only: its W_V/W_O and head gates are not ours to read."""

    def declared_layout(self) -> dict[str, tuple[int, int]]:
        return dict(self.network.attention_layout)  # read from the library's config: its kinds vary by model

    def declared_capabilities(self) -> frozenset[str]:
        return frozenset({TRANSLATION} if self.network.is_encoder_decoder else ())

    @property
    def architecture(self) -> str:
        return self.network.model_type

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        if switched_off:
            raise ValueError(f"{self.model_id} cannot switch heads off")
        return self._analysed(self.network.analyse(text))
