"""The one interface to every model family: a `LabModel` protocol, one adapter per family, and `open_model(id)`.

Pages and views ask a LabModel what it has (`layout`, `capabilities`) and what it computes (`analyse`, `explain`,
`importance`, `labels`); they never ask which class or family it is. This module is the only place that does.

Families today (the one name of each: `LabModel.family`, also `family_of(config)` for a training configuration):

    "transformer"    our encoder-decoder translator (model/transformer.py): encoder self, decoder self, cross
    "decoder-only"   our decoder-only translator (model/decoder_only.py): one causal map over "<bos> english ⟶ french"
    "bahdanau"       our GRU seq2seq with additive attention (model/seq2seq.py): one alignment, no heads
    "no-attention"   the same GRU with one fixed context vector: no attention at all
    "bert"           a BERT encoder on our own modules (model/bert.py): all-MiniLM-L6-v2, BERT folders
    "transformers"   any other models-folder entry, run through the `transformers` library (raw weights only)
    "llama"          a decoder-only LLM in our own code (model/llama.py: SmolLM2-135M-Instruct): causal self-attention,
                     generation step by step with a KV cache

Adding a family (a decoder-only LLM such as SmolLM2 in model/llama.py, a toy decoder, ...) is one more adapter here:

1. a class with the LabModel attributes: `family`, `network` (what it wraps), `config`, `task`, `layout` (kind ->
   (layers, heads); a decoder-only model has {"decoder_self": (L, h)}), `capabilities` (the constants below it
   really offers: GENERATION for a model that writes text with its own decoding loop, NORMS only when its W_V/W_O
   are ours to read), `positions` (how it knows word order: "table", "learned", "rotary", "recurrence",
   "unknown"), `head_dim`, `label_sentences`;
2. `analyse(text, switched_off)` returning a model.sources.AnalysedInput with a KindMaps per kind of `layout`;
   `explain`, `importance`, `labels` for the capabilities it declares (NotImplementedError for the others);
3. a line in `adapt()` (an already loaded network) and, when it is opened by id, in `open_model()`.

Shapes: every map (L, h, T_q, T_k), rows are queries, as in model.sources.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from model.explain.explanations import decoder_only_explanations, encoder_explanations, transformer_explanations
from model.explain.fixed_sets import ENCODER_SENTENCES, LANGUAGE_MODEL_TEXTS, held_out_pairs
from model.explain.importance import (encoder_importance, encoder_pruning_curve, evaluation_set, head_importance,
                                      language_model_importance, language_model_pruning_curve, language_model_texts,
                                      pruning_curve)
from model.explain.kinds import SELF_KINDS
from model.explain.next_token import next_token_prediction
from model.explain.patterns import (PatternScores, encoder_head_labels, labelling_sentences, language_model_head_labels,
                                    transformer_head_labels)
from model.explain.rollout import attention_rollout
from model.bert import MINILM_NAME, PretrainedEncoder, load_minilm
from model.checkpoint import CheckpointError, LoadedModel, load_checkpoint, read_sidecar
from model.config import DecoderOnlyConfig, TransformerConfig, family_of
from model.data import BOS_ID
from model.decode import greedy_decode
from model.generation import GenerationStep, generation_step
from model.gguf_weights import SMOLLM2_NAME
from model.kv_cache import StepTiming, time_step_both_ways
from model.llama import MAX_TOKENS as LLM_MAX_TOKENS
from model.llama import KVCache, LoadedLlama, load_smollm2, value_weighted_norms
from model.local_models import LocalModelEntry, TransformersModel, local_model_entry, open_local_model
from model.sources import (ABLATION, EMBEDDING, KIND_NAMES, RESCALE, STEPS, TRANSLATION, AnalysedInput, KindMaps,
                           analyse_causal_translation, analyse_encoder, analyse_toy, compact_dtype)
from model.transformer import HeadMasks

CHECKPOINT_DIR = Path(__file__).resolve().parents[1] / "assets" / "checkpoints"
# Capabilities beyond model.sources' (ABLATION, RESCALE, TRANSLATION, EMBEDDING, STEPS): what a view may ask for.
NORMS = "norms"  # value-weighted norms (Kobayashi et al. 2020): needs the model's W_V and W_O
IMPORTANCE = "importance"  # head importance (ablation + gradient, Michel et al. 2019): needs head gates
PATTERNS = "patterns"  # head-pattern labels over a fixed set of sentences
VOCABULARY = "vocabulary"  # a closed word vocabulary (unknown words are <unk>; the sidebar lists the words)
TRAINING = "training"  # trained in this app (model/train.py); its held-out set is known
GENERATION = "generation"  # writes text with its own decoding loop (the decoder-only LLM's KV-cache generation)
NEXT_TOKEN = "next_token"  # predicts the token after any text: AnalysedInput.next_token (ablation compares it)
SwitchedOff = tuple[tuple[str, int, int], ...]  # (kind, layer, head), 0-based: heads switched off
# Every family's one name (LabModel.family); tests/test_family_branches.py fails where ui/, app_pages/ or viz/
# compare anything with one of them: a new family adds its name here.
FAMILY_NAMES = ("transformer", "bahdanau", "no-attention", "decoder-only", "bert", "transformers", "llama")


@runtime_checkable
class LabModel(Protocol):
    """What every family offers the pages (module docstring: how to add one)."""

    model_id: str
    network: Any  # the loaded network and what it reads text with (LoadedModel, PretrainedEncoder, ...)
    family: str
    layout: dict[str, tuple[int, int]]  # kind -> (layers, heads); {} for a model without heads
    capabilities: frozenset[str]
    positions: str  # how it knows word order: "table", "learned", "rotary", "recurrence", "unknown"
    label_sentences: int  # how many sentences labels() reads (0 without PATTERNS)

    @property
    def config(self) -> Any: ...

    @property
    def task(self) -> str: ...

    @property
    def head_dim(self) -> int: ...

    def can(self, capability: str) -> bool: ...

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput: ...

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]: ...

    def importance(self) -> dict: ...

    def labels(self) -> dict[str, PatternScores]: ...

    def position_table(self) -> torch.nn.Module | None: ...


CURVE_POINTS = 12  # evaluations of the "switch off the k least important heads" curve (plus k = 0)
LABEL_SENTENCES = 100  # held-out sentences a translator's pattern labels are read from


def curve_counts(total: int) -> list[int]:
    """The k of the "switch off the k least important heads" curve: about CURVE_POINTS steps, 0 and every head."""
    return sorted(set(range(0, total + 1, max(1, total // CURVE_POINTS))) | {total})


def _teacher_forced(analysed: AnalysedInput, loaded, explanations) -> dict[str, np.ndarray]:
    """A translation's explanations (model.explain.explanations: weights, value norms, rollout) from one
    teacher-forced pass over the source and the output greedy decoding wrote; the batch of one dropped."""
    result = analysed.decode
    device = next(loaded.model.parameters()).device
    src = torch.tensor([result.source.ids], device=device)
    tgt_in = torch.tensor([[BOS_ID] + loaded.tgt_vocab.encode(result.output_tokens)[0]], device=device)
    return {name: value[:, 0] for name, value in explanations(loaded.model, src, tgt_in).items()}


@dataclass(eq=False)
class _Adapter:
    """What every adapter shares: the id, the wrapped network and the questions answered from its attributes."""

    model_id: str
    network: Any
    family: str = ""
    layout: dict = None  # type: ignore[assignment]  # set by each adapter's __post_init__
    capabilities: frozenset = frozenset()
    positions: str = "unknown"
    label_sentences: int = 0

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

    def can(self, capability: str) -> bool:
        return capability in self.capabilities

    def _analysed(self, analysed: AnalysedInput) -> AnalysedInput:
        """The analysis with this model's capabilities (the views ask the analysis or the model: the same set)."""
        return replace(analysed, capabilities=self.capabilities)

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Raw weights (L, h, T_q, T_k) and rollout_<self kind> (L, T, T); no norms (model-specific)."""
        arrays = {kind: maps.weights for kind, maps in analysed.maps.items()}
        arrays.update({f"rollout_{kind}": attention_rollout(analysed.maps[kind].weights)
                       for kind in SELF_KINDS if kind in analysed.maps})
        return arrays

    def importance(self) -> dict:
        raise NotImplementedError(f"{self.model_id}: no head importance ({self.family})")

    def labels(self) -> dict[str, PatternScores]:
        raise NotImplementedError(f"{self.model_id}: no head labels ({self.family})")

    def position_table(self) -> torch.nn.Module | None:
        """The position table the model adds to its inputs, where `positions` is "table"; else None."""
        return None


@dataclass(eq=False)
class TranslatorAdapter(_Adapter):
    """Our encoder-decoder Transformer (a shipped or trained LoadedModel): every capability."""

    def __post_init__(self):
        cfg = self.network.config
        self.family = family_of(cfg)
        self.layout = {kind: (cfg.num_layers, cfg.num_heads) for kind in KIND_NAMES}
        self.capabilities = frozenset({ABLATION, RESCALE, TRANSLATION, STEPS, NORMS, IMPORTANCE, PATTERNS,
                                       VOCABULARY, TRAINING})
        self.positions = "table"
        self.label_sentences = LABEL_SENTENCES

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        masks = None
        if switched_off:
            cfg = self.network.config
            ones = {kind: torch.ones(cfg.num_layers, cfg.num_heads) for kind in KIND_NAMES}
            for kind, layer, head in switched_off:
                ones[kind][layer, head] = 0.0
            masks = HeadMasks(**ones)
        return self._analysed(analyse_toy(self.model_id, text, greedy_decode(self.network, text, head_masks=masks)))

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Weights and value norms (L, h, T_q, T_k), rollout_<kind> (L, T, T) of the translation, teacher-forced."""
        return _teacher_forced(analysed, self.network, transformer_explanations)

    def importance(self) -> dict:
        """{"importance": HeadImportance on the 300 held-out sentences, "curve": [{k, exact_match, loss}]}."""
        evaluation = evaluation_set(self.network, held_out_pairs(self.network))
        importance = head_importance(self.network.model, evaluation)
        counts = curve_counts(len(importance.heads))
        return {"importance": importance,
                "curve": pruning_curve(self.network.model, evaluation, importance, counts)}

    def labels(self) -> dict[str, PatternScores]:
        sentences = labelling_sentences(self.network,
                                                 held_out_pairs(self.network, LABEL_SENTENCES))
        return transformer_head_labels(self.network.model, sentences)

    def position_table(self) -> torch.nn.Module:
        """The encoder's position table (model.positional.summarize_position_table reads it)."""
        return self.network.model.src_pos


@dataclass(eq=False)
class DecoderOnlyAdapter(_Adapter):
    """Our decoder-only translator (a shipped or trained LoadedModel of model/decoder_only.py): one causal
    self-attention map per layer, decoder_self (L, h, N, N), over "<bos> english ⟶ french"; the query rows after
    "⟶" are the French tokens, and their columns before it the English block, where the encoder-decoder's
    cross-attention looks. Ablation, rescale, raw weights, rollout and value norms; no step-by-step decoding page
    (it draws cross-attention), no head importance or pattern labels (written for the encoder-decoder)."""

    def __post_init__(self):
        cfg = self.network.config
        self.family = family_of(cfg)
        self.layout = {"decoder_self": (cfg.num_layers, cfg.num_heads)}
        self.capabilities = frozenset({ABLATION, RESCALE, TRANSLATION, NORMS, VOCABULARY, TRAINING})
        self.positions = "table"

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        masks = None
        if switched_off:
            cfg = self.network.config
            ones = torch.ones(cfg.num_layers, cfg.num_heads)  # (L, h): 1 keeps a head, 0 switches it off
            for kind, layer, head in switched_off:
                if kind != "decoder_self":
                    raise ValueError(f"{self.model_id} has decoder_self heads only, not {kind}")
                ones[layer, head] = 0.0
            masks = HeadMasks(decoder_self=ones)
        return analyse_causal_translation(self.model_id, text, greedy_decode(self.network, text, head_masks=masks),
                                          self.capabilities)

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """decoder_self and value_norms_decoder_self (L, h, N, N), rollout_decoder_self (L, N, N) of the translation
        read as one sequence (teacher-forced: the same pass greedy decoding ended with)."""
        return _teacher_forced(analysed, self.network, decoder_only_explanations)

    def position_table(self) -> torch.nn.Module:
        """The one position table of the packed sequence (model.positional.summarize_position_table reads it)."""
        return self.network.model.pos


@dataclass(eq=False)
class Seq2SeqAdapter(_Adapter):
    """Our GRU seq2seq pair: with Bahdanau attention (one alignment (T_out, T_src)) or without; no heads."""

    def __post_init__(self):
        self.family = family_of(self.network.config)
        self.layout = {}
        self.capabilities = frozenset({TRANSLATION, STEPS, VOCABULARY, TRAINING})
        self.positions = "recurrence"

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        if switched_off:
            raise ValueError(f"{self.model_id} has no heads to switch off")
        return self._analysed(analyse_toy(self.model_id, text, greedy_decode(self.network, text)))

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        return {}


@dataclass(eq=False)
class EncoderAdapter(_Adapter):
    """A BERT encoder on our own MultiHeadAttention (all-MiniLM-L6-v2, BERT folders): self-attention only."""

    def __post_init__(self):
        cfg = self.network.config
        self.family = "bert"
        self.layout = {"encoder_self": (cfg.num_layers, cfg.num_heads)}
        self.capabilities = frozenset({ABLATION, RESCALE, EMBEDDING, NORMS, IMPORTANCE, PATTERNS})
        self.positions = "learned"
        self.label_sentences = len(ENCODER_SENTENCES)

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        pairs = tuple((layer, head) for _, layer, head in switched_off)
        return self._analysed(analyse_encoder(self.model_id, text, self.network, pairs))

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Weights, value norms (L, h, T, T) and rollout (L, T, T) over the text's raw tokens."""
        return encoder_explanations(self.network, self.network.encode(analysed.text))

    def importance(self) -> dict:
        """{"importance": EncoderImportance over ENCODER_SENTENCES, "curve": [{k, similarity}]}."""
        importance = encoder_importance(self.network)
        return {"importance": importance, "curve": encoder_pruning_curve(
            self.network, importance, curve_counts(importance.change.size))}

    def labels(self) -> dict[str, PatternScores]:
        return {"encoder_self": encoder_head_labels(self.network)}


@dataclass(eq=False)
class TransformersAdapter(_Adapter):
    """A models-folder entry run through `transformers` (GPT-2, BART, ...): raw weights and rollout only; its
    W_V/W_O and head gates are not ours to read."""

    def __post_init__(self):
        self.family = "transformers"
        self.layout = dict(self.network.attention_layout)
        self.capabilities = frozenset({TRANSLATION} if self.network.is_encoder_decoder else ())

    @property
    def architecture(self) -> str:
        return self.network.model_type

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        if switched_off:
            raise ValueError(f"{self.model_id} cannot switch heads off")
        return self._analysed(self.network.analyse(text))


@dataclass(eq=False)
class LlamaAdapter(_Adapter):
    """A decoder-only Llama LLM in our own code (a model.llama.LoadedLlama: SmolLM2-135M-Instruct): one causal
    self-attention kind, value norms (its W_V and W_O are ours), rescaling (its scores are returned), generation
    one token at a time with its KV cache, and ablation through its head mask: what switching heads off changes is
    its prediction of the token after the text and its loss on the text itself (NEXT_TOKEN). Head importance is
    the gradient on head gates of the next-token loss over LANGUAGE_MODEL_TEXTS; pattern labels read those texts
    (the first token as the sink) and a repeated random sequence (induction)."""

    def __post_init__(self):
        cfg = self.network.config
        self.family = "llama"
        self.layout = {"decoder_self": (cfg.num_layers, cfg.num_heads)}
        self.capabilities = frozenset({NORMS, RESCALE, GENERATION, ABLATION, NEXT_TOKEN, IMPORTANCE, PATTERNS})
        self.positions = "rotary"
        self.label_sentences = len(LANGUAGE_MODEL_TEXTS)

    @property
    def task(self) -> str:
        return "english"  # it reads any text; the sidebar's English examples suit it

    @property
    def head_dim(self) -> int:
        return self.network.config.head_dim

    @property
    def max_tokens(self) -> int:
        """The longest text analysed with every map (model.llama.MAX_TOKENS)."""
        return LLM_MAX_TOKENS

    def _head_mask(self, switched_off: SwitchedOff) -> torch.Tensor | None:
        if not switched_off:
            return None
        cfg = self.network.config
        mask = torch.ones(cfg.num_layers, cfg.num_heads)  # (L, h): 0 multiplies a head's output before W_o
        for kind, layer, head in switched_off:
            if kind != "decoder_self":
                raise ValueError(f"{self.model_id} has only decoder_self heads, not {kind}")
            mask[layer, head] = 0.0
        return mask

    def analyse(self, text: str, switched_off: SwitchedOff = ()) -> AnalysedInput:
        """The text's causal self-attention, (L, h, T, T), over its first MAX_TOKENS tokens, and the model's
        prediction of the token after them (with the heads switched off)."""
        ids = self.encode(text)
        if not ids:
            raise ValueError(f"{self.model_id}: the text has no tokens")
        truncated_from = len(ids) if len(ids) > LLM_MAX_TOKENS else None
        ids = ids[:LLM_MAX_TOKENS]
        cfg = self.network.config
        dtype = compact_dtype(cfg.num_layers, cfg.num_heads, len(ids), len(ids))
        # a long text's maps are converted layer by layer: its float32 maps are never all held at once
        out = self.network.run(ids, head_mask=self._head_mask(switched_off),
                               maps_dtype=torch.float16 if dtype == np.float16 else None)
        tokens = self.network.token_texts(ids)
        masked = np.triu(np.ones((len(ids), len(ids)), dtype=bool), k=1)  # (T, T): key after query is hidden
        maps = {"decoder_self": KindMaps("decoder_self", out.weights[:, 0].numpy(), out.scores[:, 0].numpy(),
                                         tokens, tokens, masked)}
        return AnalysedInput(self.model_id, text, tokens, maps, self.capabilities, truncated_from=truncated_from,
                             next_token=next_token_prediction(out.logits[0], ids, self.token_texts))

    def explain(self, analysed: AnalysedInput) -> dict[str, np.ndarray]:
        """Weights and value norms (L, h, T, T), rollout_decoder_self (L, T, T) of the analysed text."""
        ids = self.encode(analysed.text)[:LLM_MAX_TOKENS]
        cfg = self.network.config
        compact = compact_dtype(cfg.num_layers, cfg.num_heads, len(ids), len(ids)) == np.float16
        out = self.network.run(ids, maps_dtype=torch.float16 if compact else None)  # as analyse keeps them
        weights = out.weights[:, 0].numpy()
        return {"decoder_self": weights, "rollout_decoder_self": attention_rollout(weights),
                "value_norms_decoder_self": value_weighted_norms(self.network.model, out)[:, 0].numpy()}

    def importance(self) -> dict:
        """{"importance": LanguageModelImportance (gradient (L, h)) on LANGUAGE_MODEL_TEXTS, "curve": [{k, loss}]}:
        one forward and backward pass, then one pass per point of the curve."""
        texts = language_model_texts(self.encode, LANGUAGE_MODEL_TEXTS)
        importance = language_model_importance(self.network.model, texts)
        return {"importance": importance, "curve": language_model_pruning_curve(
            self.network.model, texts, importance, curve_counts(importance.gradient.size))}

    def labels(self) -> dict[str, PatternScores]:
        return {"decoder_self": language_model_head_labels(self.network)}

    # --- generation (GENERATION) ------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return self.network.encode(text)

    def token_texts(self, ids: list[int]) -> list[str]:
        return self.network.token_texts(ids)

    def decode(self, ids: list[int]) -> str:
        return self.network.decode(ids)

    def chat_prompt(self, question: str) -> str:
        """The question as the Instruct model was trained to read one: its chat template, up to the assistant turn."""
        return self.network.chat_prompt([{"role": "user", "content": question}])

    @property
    def stop_ids(self) -> tuple[int, ...]:
        """Tokens after which the model has finished (SmolLM2: <|im_end|>)."""
        return (self.network.eos_id,)

    def next_token(self, ids: list[int], cache: KVCache | None, *, temperature: float = 0.0,
                   top_k: int | None = None, seed: int = 0) -> tuple[GenerationStep, KVCache]:
        """One generation step with the KV cache (model.generation.generation_step): cache holds ids[:-1] (None at
        the first step); the step's attention holds the last query's row in every layer and head, (L, h, T_k)."""
        step, cache = generation_step(self.network.model, ids, cache, temperature=temperature, top_k=top_k,
                                      seed=seed, need_weights=True)
        return step, cache

    def time_step(self, ids: list[int], cache: KVCache) -> StepTiming:
        """The forward pass predicting the token after ids, timed with `cache` (holding ids[:-1]) and without."""
        return time_step_both_ways(self.network.model, ids, cache)


def adapt(model_id: str, network) -> LabModel:
    """The adapter of an already loaded network (a shipped, trained, uploaded or opened model)."""
    if isinstance(network, _Adapter):
        return network
    if isinstance(network, LoadedModel):
        if isinstance(network.config, DecoderOnlyConfig):
            return DecoderOnlyAdapter(model_id, network)
        cls = TranslatorAdapter if isinstance(network.config, TransformerConfig) else Seq2SeqAdapter
        return cls(model_id, network)
    if isinstance(network, PretrainedEncoder):
        return EncoderAdapter(model_id, network)
    if isinstance(network, TransformersModel):
        return TransformersAdapter(model_id, network)
    if isinstance(network, LoadedLlama):
        return LlamaAdapter(model_id, network)
    raise TypeError(f"{model_id}: no adapter for {type(network).__name__}")


def shipped_model_names() -> list[str]:
    """Checkpoint stems in assets/checkpoints, e.g. 'transformer_en-fr'."""
    return sorted(p.stem for p in CHECKPOINT_DIR.glob("*.json") if p.with_suffix(".safetensors").exists())


def open_model(model_id: str, device: str | torch.device = "cpu", folder: Path | None = None) -> LabModel:
    """A model by id: a shipped checkpoint, the pretrained encoder, or a models-folder entry (`folder`, else the
    configured one). ValueError (CheckpointError) naming the choices when there is none of that name."""
    if model_id in shipped_model_names():
        return adapt(model_id, load_checkpoint(CHECKPOINT_DIR / model_id, device=device))
    if model_id == MINILM_NAME:
        return adapt(model_id, load_minilm())
    if model_id == SMOLLM2_NAME:  # loaded on this first call, then shared by the process (model.llama.load_smollm2)
        return adapt(model_id, load_smollm2())
    entry = local_model_entry(model_id, folder)
    if entry is None:
        raise CheckpointError(f"unknown model {model_id!r}; choose a shipped model ({', '.join(shipped_model_names())})"
                              f", {MINILM_NAME}, {SMOLLM2_NAME}, or a folder name in the models folder")
    return adapt(model_id, open_local_model(entry))


def trains_heads(family: str) -> bool:
    """A family the train page trains (model.train.FAMILIES) whose models have layers of attention heads."""
    from model.train import default_model

    return hasattr(default_model(family), "num_heads")


def trains_attention(family: str) -> bool:
    """A family the train page trains whose models attend at all (heads or one additive alignment)."""
    from model.train import default_model

    return getattr(default_model(family), "attention", True)


def model_family(model_id: str) -> str:
    """The family of a shipped checkpoint (from its JSON alone, no weights loaded) or of the pretrained encoder."""
    from model.config import config_from_dict

    if model_id == MINILM_NAME:
        return "bert"
    if model_id == SMOLLM2_NAME:
        return "llama"
    return family_of(config_from_dict(read_sidecar(CHECKPOINT_DIR / model_id)["config"]))


def entry_family(entry: LocalModelEntry) -> tuple[str, str]:
    """(family, architecture) of a models-folder entry without loading it: "bert" runs in our encoder."""
    return ("bert", "bert") if entry.runs_in_our_encoder else ("transformers", entry.model_type)
