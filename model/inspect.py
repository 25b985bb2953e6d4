"""`python -m model.inspect MODEL TEXT --out FILE.npz`: every attention map of one text, for researchers and checks.

The .npz holds `tokens` (the input tokens as the app shows them), one float32 array per attention kind the model
has, named encoder_self, decoder_self and cross, each shaped (layers, heads, queries, keys), and for a translation
model `output_tokens` (the greedy translation) and `decoder_tokens` (the decoder's query tokens: <bos> + output).
The numbers are those of the app's CSV export: both open the model with model.families.open_model and analyse it
with its adapter.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from model.capabilities import TRANSLATION


def model_names() -> list[str]:
    """Every name MODEL may be: shipped checkpoints, the pretrained encoder, the models folder's entries."""
    from model.bert import MINILM_NAME
    from model.families import shipped_model_names
    from model.local_models import list_local_models

    from model.gguf_weights import SMOLLM2_NAME

    return (shipped_model_names() + [MINILM_NAME, SMOLLM2_NAME]
            + [entry.name for entry in list_local_models() if entry.usable])


def analyse(model: str, text: str):
    """The AnalysedInput of `text` for the named model (the app's own path: model.families)."""
    return _analyse_with_model(model, text)[0]


def _analyse_with_model(model: str, text: str):
    """(AnalysedInput, the LabModel) of `text` for the named model, opened as the app opens it."""
    from model.families import open_model

    lab = open_model(model)
    return lab.analyse(text), lab


def explanation_arrays(analysed, lab) -> dict[str, np.ndarray]:
    """rollout_<self kind> (L, T, T) and value_norms_<kind> (L, h, T_q, T_k) for models whose value norms we can
    read (NORMS); {} for the others (GRU seq2seq has no heads; transformers models keep their W_V/W_O)."""
    from model.capabilities import NORMS

    if not lab.can(NORMS):
        return {}
    return {name: value for name, value in lab.explain(analysed).items()
            if name.startswith(("rollout_", "value_norms_"))}


def llm_arrays(text: str) -> dict[str, np.ndarray]:
    """SmolLM2-135M-Instruct's arrays: tokens, decoder_self (30, 9, T, T) (its causal self-attention: a
    decoder-only model), rollout_decoder_self (30, T, T) and value_norms_decoder_self (30, 9, T, T)."""
    import torch

    from model.explain.rollout import attention_rollout
    from model.llama import MAX_TOKENS, load_smollm2, value_weighted_norms

    loaded = load_smollm2()
    ids = loaded.encode(text)
    if not ids or len(ids) > MAX_TOKENS:
        raise ValueError(f"the text is {len(ids)} tokens; {loaded.name} takes 1 to {MAX_TOKENS}")
    with torch.no_grad():
        out = loaded.run(ids)
        norms = value_weighted_norms(loaded.model, out)
    weights = out.weights[:, 0].numpy()  # (L, h, T, T)
    return {"tokens": np.array(loaded.token_texts(ids), dtype=str), "decoder_self": weights,
            "rollout_decoder_self": attention_rollout(weights), "value_norms_decoder_self": norms[:, 0].numpy()}


def inspect_to_npz(model: str, text: str, out: str | Path) -> dict[str, np.ndarray]:
    """Write the .npz described in the module docstring; returns what was written."""
    from model.gguf_weights import SMOLLM2_NAME

    if model == SMOLLM2_NAME:  # until its model/families.py adapter: llm_arrays is what that adapter will return
        arrays = {name: value if value.dtype.kind == "U" else np.asarray(value, dtype=np.float32)
                  for name, value in llm_arrays(text).items()}
        np.savez(out, **arrays)
        return arrays
    analysed, lab = _analyse_with_model(model, text)
    arrays = {"tokens": np.array(analysed.input_tokens, dtype=str)}
    for kind in lab.layout:  # the kinds of heads (a GRU's one alignment is not one)
        arrays[kind] = np.asarray(analysed.maps[kind].weights, dtype=np.float32)  # (layers, heads, queries, keys)
    if analysed.can(TRANSLATION):
        arrays["output_tokens"] = np.array(analysed.output_tokens, dtype=str)
        if "decoder_self" in analysed.maps:
            arrays["decoder_tokens"] = np.array(analysed.maps["decoder_self"].query_tokens, dtype=str)
    arrays.update({name: np.asarray(value, dtype=np.float32)
                   for name, value in explanation_arrays(analysed, lab).items()})
    np.savez(out, **arrays)
    return arrays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m model.inspect", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="The .npz holds: tokens; encoder_self, decoder_self, cross (those the model has), each float32 "
               "(layers, heads, queries, keys), rows are queries and sum to 1; output_tokens and decoder_tokens "
               "for translation models; for models on our own modules also rollout_encoder_self, "
               "rollout_decoder_self (layers, queries, keys) and value_norms_<kind> (layers, heads, queries, "
               "keys). Models folder: the ATTENTION_LAB_MODELS environment variable or "
               ".streamlit/attention_lab.toml (see docs/models.md).")
    parser.add_argument("model", metavar="MODEL",
                        help="a shipped model (e.g. transformer_en-fr), all-MiniLM-L6-v2, SmolLM2-135M-Instruct "
                             "(decoder_self only: a decoder-only model), or a folder name in the models folder")
    parser.add_argument("text", metavar="TEXT", help="the sentence to analyse")
    parser.add_argument("--out", required=True, metavar="FILE.npz", help="where to write the arrays")
    args = parser.parse_args(argv)
    from model.checkpoint import CheckpointError

    try:
        arrays = inspect_to_npz(args.model, args.text, args.out)
    except (ValueError, CheckpointError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    shapes = ", ".join(f"{name} {arrays[name].shape}" for name in ("encoder_self", "decoder_self", "cross")
                       if name in arrays)
    print(f"{args.out}: {len(arrays['tokens'])} tokens; {shapes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
