"""What every adapter shares: the registry of families, the base class and its one head mask.

An adapter registers itself under the family names it adapts (`@family("llama")`); `adapt(model_id, network)` looks
the network's own `family` up in that registry, so a new family is one new module and no ladder to extend.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import torch

from model.adapters.protocols import LabModel, LoadedNetwork, SwitchedOff, WordVocabulary
from model.explain.kinds import SELF_KINDS
from model.explain.patterns import PatternScores
from model.explain.rollout import attention_rollout
from model.sources import AnalysedInput

CURVE_POINTS = 12  # evaluations of the "switch off the k least important heads" curve (plus k = 0)
ADAPTERS: dict[str, type[Adapter]] = {}  # family name -> its adapter class, filled by @family


def family(*names: str) -> Callable[[type[Adapter]], type[Adapter]]:
    """Register an adapter class for the networks whose `family` is one of `names`."""
    def register(cls: type[Adapter]) -> type[Adapter]:
        for name in names:
            if name in ADAPTERS:
                raise ValueError(f"family {name!r} already has an adapter: {ADAPTERS[name].__name__}")
            ADAPTERS[name] = cls
        return cls
    return register


def adapt(model_id: str, network: Any) -> LabModel:
    """The adapter of an already loaded network (a shipped, trained, uploaded or opened model), found by the
    network's own `family` in the registry."""
    if isinstance(network, Adapter):
        return network
    name = getattr(network, "family", None)
    if name not in ADAPTERS:
        raise TypeError(f"{model_id}: no adapter for {type(network).__name__} (family {name!r})")
    return ADAPTERS[name](model_id, network)


def curve_counts(total: int) -> list[int]:
    """The k of the "switch off the k least important heads" curve: about CURVE_POINTS steps, 0 and every head."""
    return sorted(set(range(0, total + 1, max(1, total // CURVE_POINTS))) | {total})


@dataclass(eq=False)
class Adapter:
    """The id, the wrapped network and the questions answered from its attributes. Each family's subclass declares
    what sets it apart, once, as class attributes: KINDS (its kinds of attention, each (config.num_layers,
    config.num_heads)), CAPABILITIES, POSITIONS, LABEL_SENTENCES; a family whose layout or capabilities depend on the
    network itself overrides declared_layout() / declared_capabilities(). __post_init__ sets the instance's `layout`,
    `capabilities`, `positions` and `label_sentences` from them, for every family alike."""

    KINDS: ClassVar[tuple[str, ...]] = ()  # () : no heads, layout {}
    CAPABILITIES: ClassVar[frozenset[str]] = frozenset()  # model.capabilities constants it really offers
    POSITIONS: ClassVar[str] = "unknown"  # how it knows word order: "table", "learned", "rotary", "recurrence"
    LABEL_SENTENCES: ClassVar[int] = 0  # how many sentences labels() reads (0 without PATTERNS)

    model_id: str
    network: LoadedNetwork
    family: str = field(init=False)
    layout: dict[str, tuple[int, int]] = field(init=False)  # kind -> (layers, heads)
    capabilities: frozenset[str] = field(init=False)
    positions: str = field(init=False)
    label_sentences: int = field(init=False)

    def __post_init__(self):
        self.family = self.network.family
        self.layout = self.declared_layout()
        self.capabilities = self.declared_capabilities()
        self.positions = self.POSITIONS
        self.label_sentences = self.LABEL_SENTENCES

    def declared_layout(self) -> dict[str, tuple[int, int]]:
        """kind -> (layers, heads): each of KINDS with the config's layers and heads ({} without KINDS)."""
        return {kind: (self.config.num_layers, self.config.num_heads) for kind in self.KINDS}

    def declared_capabilities(self) -> frozenset[str]:
        return self.CAPABILITIES

    @property
    def config(self):
        return self.network.config

    @property
    def task(self) -> str:
        return self.network.task

    @property
    def head_dim(self) -> int:
        """d_k = d_model / h (1 for a model without heads)."""
        return getattr(self.config, "d_model", 1) // max(getattr(self.config, "num_heads", 1), 1)

    def weights(self) -> torch.nn.Module | None:
        """The network's torch module (its weights); None for a network that has none of ours."""
        module = getattr(self.network, "model", None)
        return module if isinstance(module, torch.nn.Module) else None

    @property
    def parameter_count(self) -> int:
        """How many weights a forward multiplies by (the analysis queue sizes its work by it); 0 when unknown."""
        module = self.weights()
        return 0 if module is None else sum(parameter.numel() for parameter in module.parameters())

    def freeze(self) -> None:
        """Gradients off for every weight: a model shared read-only by every session."""
        module = self.weights()
        if module is not None:
            module.requires_grad_(False)

    def can(self, capability: str) -> bool:
        return capability in self.capabilities

    def head_masks(self, switched_off: SwitchedOff) -> dict[str, torch.Tensor] | None:
        """kind -> (L, h) of 0/1, 0 for each head switched off (it multiplies the head's output before W_o), one per
        kind of the layout; None when nothing is switched off. ValueError for a kind the model does not have."""
        if not switched_off:
            return None
        masks = {kind: torch.ones(layers, heads) for kind, (layers, heads) in self.layout.items()}
        for kind, layer, head in switched_off:
            if kind not in masks:
                raise ValueError(f"{self.model_id} has no {kind} heads to switch off"
                                 f" ({', '.join(masks) or 'no heads at all'})")
            masks[kind][layer, head] = 0.0
        return masks

    def _analysed(self, analysed: AnalysedInput) -> AnalysedInput:
        """The analysis with this model's capabilities (the views ask the analysis or the model: the same set)."""
        return replace(analysed, capabilities=self.capabilities)

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Raw weights (L, h, T_q, T_k) and rollout_<self kind> (L, T, T); no norms (model-specific)."""
        arrays = {kind: maps.weights for kind, maps in analysed.maps.items()}
        arrays.update({f"rollout_{kind}": attention_rollout(analysed.maps[kind].weights)
                       for kind in SELF_KINDS if kind in analysed.maps})
        return arrays

    def labels(self) -> dict[str, PatternScores]:
        raise NotImplementedError(f"{self.model_id}: no head labels ({self.family})")

    def position_table(self) -> torch.nn.Module | None:
        """The position table the model adds to its inputs, where `positions` is "table"; else None."""
        return None


class ClosedVocabulary:
    """The typed vocabulary part of our own translators (a model.checkpoint.LoadedModel network), for the adapters
    that declare VOCABULARY."""

    network: LoadedNetwork

    @property
    def vocabulary(self) -> WordVocabulary:
        network, config = self.network, self.network.config
        # a decoder-only translator reads its English in half its sequence (max_source_len), the French follows
        longest = getattr(config, "max_source_len", config.max_len) - 1  # room for <eos>, as model/decode.py
        return WordVocabulary(network.task, network.src_vocab, network.tgt_vocab, longest)
