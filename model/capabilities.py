"""What a model offers beyond its maps: every capability a page or view may ask for, in one place.

An adapter (model/adapters/) declares the set it really has (`LabModel.capabilities`); an analysis carries the same
set (`AnalysedInput.can`). Pages show a view only when the capability is there and never ask for the family.
"""

ABLATION = "ablation"  # heads can be switched off (a head mask)
RESCALE = "rescale"  # the pre-softmax scores are returned, so a head can be re-softmaxed at another temperature
TRANSLATION = "translation"  # writes a translation: AnalysedInput.translation
EMBEDDING = "embedding"  # an encoder's part: special tokens, word pieces, final vectors, the sentence embedding
# (AnalysedInput.encoding)
STEPS = "steps"  # a step-by-step greedy decode with cross-attention or an alignment (the decoding page)
NORMS = "norms"  # value-weighted norms (Kobayashi et al. 2020): needs the model's W_V and W_O
IMPORTANCE = "importance"  # head importance (ablation + gradient, Michel et al. 2019): needs head gates
PATTERNS = "patterns"  # head-pattern labels over a fixed set of sentences
VOCABULARY = "vocabulary"  # a closed word vocabulary (unknown words are <unk>; the sidebar lists the words): our
# own translators, whose analysis keeps their greedy decode (AnalysedInput.decode)
ALIGNMENT = "alignment"  # one additive alignment (T_out, T_src) and no heads (Bahdanau et al. 2015, §3.1): drawn as
# one map, not as heads
TRAINING = "training"  # trained in this app (model/train.py); its held-out set is known
GENERATION = "generation"  # writes text with its own decoding loop (model.adapters.protocols.Generates)
NEXT_TOKEN = "next_token"  # predicts the token after any text: AnalysedInput.next_token (ablation compares it)
RESIDUAL_STREAM = "residual_stream"  # its residual stream per layer and its unembedding (ReadsResidualStream)
QUERIES_KEYS = "queries_keys"  # each head's queries and keys as its scores read them, after RoPE (ReadsQueriesKeys):
# a head over many texts (model.explain.qk_embedding)

ALL = frozenset({ABLATION, RESCALE, TRANSLATION, EMBEDDING, STEPS, NORMS, IMPORTANCE, PATTERNS, VOCABULARY,
                 ALIGNMENT, TRAINING, GENERATION, NEXT_TOKEN, RESIDUAL_STREAM, QUERIES_KEYS})
