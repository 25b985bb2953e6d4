"""Every model family as a LabModel: one module per family, each adapter registered under its family's names.

Pages and views ask a LabModel what it has (`layout`, `capabilities`, the small protocols of
model/adapters/protocols.py) and what it computes (`analyse`, `explain`, `labels`; `importance` where it
ScoresHeads); they never ask which class or family it is. This package and model/families.py (opening a model by
id) are the only places that do.

Families today (the one name of each: `LabModel.family`, the wrapped network's own `family`):

    "transformer"    our encoder-decoder translator (translator.py): encoder self, decoder self, cross
    "decoder-only"   our decoder-only translator (translator.py): one causal map over "<bos> english ⟶ french"
    "bahdanau"       our GRU seq2seq with additive attention (seq2seq.py): one alignment, no heads
    "no-attention"   the same GRU with one fixed context vector: no attention at all
    "bert"           a BERT encoder on our own modules (encoder.py): all-MiniLM-L6-v2, BERT folders
    "transformers"   any other models-folder entry, run through the `transformers` library (transformers.py)
    "llama"          a decoder-only LLM in our own code (llama.py: SmolLM2-135M-Instruct)

Adding a family is one more module here, imported below:

1. a subclass of base.Adapter registered with `@family("name")` (the wrapped network's `family`), declaring as class
   attributes KINDS (its kinds of attention: the layout is then kind -> (config.num_layers, config.num_heads); a
   decoder-only model has ("decoder_self",)), CAPABILITIES (the model.capabilities constants it really offers),
   POSITIONS (how it knows word order: "table", "learned", "rotary", "recurrence", "unknown") and LABEL_SENTENCES;
   the base __post_init__ sets `layout`, `capabilities`, `positions`, `label_sentences` from them (a family whose
   layout or capabilities depend on the network overrides declared_layout() / declared_capabilities());
2. `analyse(text, switched_off)` returning a model.sources.AnalysedInput with a KindMaps per kind of `layout`
   (`self.head_masks(switched_off)` builds the head masks); `explain`, `labels` for the capabilities it declares,
   and the protocols that go with its capabilities (`importance` for IMPORTANCE, Generates for GENERATION,
   ReadsResidualStream for RESIDUAL_STREAM, ReadsQueriesKeys for QUERIES_KEYS);
3. when it is opened by id, a line in model.families.open_model.
"""
from model.adapters import encoder, llama, seq2seq, transformers, translator  # noqa: F401  (each registers itself)
from model.adapters.base import ADAPTERS, Adapter, adapt, curve_counts, family
from model.adapters.encoder import EncoderAdapter
from model.adapters.llama import LlamaAdapter
from model.adapters.protocols import (EmbedsWords, GeneratingModel, Generates, HasWordVocabulary, ImportanceReport,
                                      LabModel, QueriesKeys, ReadsQueriesKeys, ReadsResidualStream, ResidualModel,
                                      ResidualStream, ScoresHeads, SwitchedOff, WordVocabulary)
from model.adapters.seq2seq import Seq2SeqAdapter
from model.adapters.transformers import TransformersAdapter
from model.adapters.translator import DecoderOnlyAdapter, TranslatorAdapter

# Every family's one name (LabModel.family); tests/test_family_branches.py fails where ui/, app_pages/ or viz/
# compare anything with one of them.
FAMILY_NAMES = tuple(ADAPTERS)

__all__ = ["ADAPTERS", "FAMILY_NAMES", "Adapter", "DecoderOnlyAdapter", "EmbedsWords", "EncoderAdapter", "Generates",
           "GeneratingModel", "ResidualModel", "HasWordVocabulary", "ImportanceReport", "LabModel", "LlamaAdapter", "QueriesKeys", "ReadsQueriesKeys",
           "ReadsResidualStream", "ResidualStream", "ScoresHeads", "Seq2SeqAdapter", "SwitchedOff",
           "TransformersAdapter", "TranslatorAdapter", "WordVocabulary", "adapt", "curve_counts", "family"]
