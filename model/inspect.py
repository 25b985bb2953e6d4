"""`python -m model.inspect MODEL TEXT --out FILE.npz`: every attention map of one text, for researchers and checks.

The .npz holds `tokens` (the input tokens as the app shows them), one float32 array per attention kind the model
has, named encoder_self, decoder_self and cross, each shaped (layers, heads, queries, keys), and for a translation
model `output_tokens` (the greedy translation) and `decoder_tokens` (the decoder's query tokens: <bos> + output).
The numbers are those of the app's CSV export: both open the model with model.families.open_model and analyse it
with its adapter.

For a model that reads its residual stream (SmolLM2-135M-Instruct), `--logit-lens` adds `lens_top_ids` (int64) and
`lens_top_probs` (float32), each (L+1, T, 5): the top five next tokens of the embeddings (row 0) and of each block's
output, through the final norm and the output matrix (model.explain.logit_lens); `--patch CORRUPT --answer TOKEN`
adds `patch_residual` (float32, (L, T)): p(answer) at CORRUPT's last position with block l's output at position t
taken from TEXT's run, and `clean_prob`, `corrupt_prob`; with `--wrong TOKEN` also `patch_logit_diff` (L, T),
`clean_logit_diff`, `corrupt_logit_diff`: logit(answer) − logit(wrong) (model.explain.patching).

`--flow` adds `flow_head` (float32, (L, h, T)) and `flow_mlp` (float32, (L, T)): the share of the last position's
output that head h of block l carries from position t, and that block l's MLP writes at position t, by the
norm-based information flow of docs/models.md (model.explain.flow: TEXT's first 128 tokens).

For any model with heads, `--find QUERY KEY` adds `finder_weight` (float32, (L, h)): each head's weight from the first
token spelled QUERY to the first token spelled KEY in the model's first kind of heads (encoder_self for a
translator or an encoder, decoder_self for a decoder-only model); a word split into pieces is named by its first
piece (model.explain.head_finder.token_index). A token that is not there exits 2 naming the tokens, and writes nothing.

For a model that generates (SmolLM2-135M-Instruct), `--branch POS --top K --steps N` adds `branch_ids` (int64, (K, N)):
each branch's N tokens after TEXT's first POS tokens, the k-th most likely token there forced first and greedy
after it, and `branch_probs` (float32, (K,)): the forced tokens' probabilities (model.branches.fork_top; K ≤ 5,
N ≤ 32, 1 ≤ POS ≤ TEXT's token count).

For SmolLM2-135M-Instruct, `--switch-off L.H[,L.H...] --steps N` adds `generated_ids` (int64, (N,)): the N greedy
tokens after TEXT with those heads' outputs zeroed before W_o (1-based layer and head, as on screen: 19.7 is L19 H7),
generated with the KV cache (model.switch_off).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from model.capabilities import TRANSLATION

BRANCH_STEPS = 8  # --steps unless given: the tokens of each --branch branch, the forced one included
SWITCH_OFF_STEPS = 16  # ... and the tokens --switch-off generates


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
    from model.explain.value_norms import llama_value_norms
    from model.llama import MAX_TOKENS, load_smollm2

    loaded = load_smollm2()
    ids = loaded.encode(text)
    if not ids or len(ids) > MAX_TOKENS:
        raise ValueError(f"the text is {len(ids)} tokens; {loaded.name} takes 1 to {MAX_TOKENS}")
    with torch.no_grad():
        out = loaded.run(ids)
        norms = llama_value_norms(loaded.model, out)
    weights = out.weights[:, 0].numpy()  # (L, h, T, T)
    return {"tokens": np.array(loaded.token_texts(ids), dtype=str), "decoder_self": weights,
            "rollout_decoder_self": attention_rollout(weights), "value_norms_decoder_self": norms[:, 0].numpy()}


def residual_arrays(model: str, text: str, lens: bool = False, corrupt: str | None = None, answer: str | None = None,
                    wrong: str | None = None) -> dict[str, np.ndarray]:
    """The logit lens's and the residual patching's arrays (the module docstring); ValueError for a model without a
    residual stream, a TEXT and CORRUPT of different token counts, or an answer or wrong token that is not one token."""
    from model.explain.logit_lens import logit_lens
    from model.explain.patching import residual_patching
    from model.families import ReadsResidualStream, open_model

    lab = open_model(model)
    if not isinstance(lab, ReadsResidualStream):
        raise ValueError(f"{model} has no residual stream to read; --logit-lens and --patch take a decoder-only LLM")
    arrays = {}
    if corrupt is not None:
        patching = residual_patching(lab, text, corrupt, answer, wrong)
        arrays.update(patch_residual=patching.patched_probs, clean_prob=np.float32(patching.clean_prob),
                      corrupt_prob=np.float32(patching.corrupt_prob))
        if wrong is not None:
            arrays.update(patch_logit_diff=patching.patched_logit_diffs,
                          clean_logit_diff=np.float32(patching.clean_logit_diff),
                          corrupt_logit_diff=np.float32(patching.corrupt_logit_diff))
    if lens:
        result = logit_lens(lab, text)
        arrays.update(lens_top_ids=result.top_ids, lens_top_probs=result.top_probs)
    return arrays


def branching_arrays(model: str, text: str, position: int, top: int, steps: int) -> dict[str, np.ndarray]:
    """--branch's arrays (model.branches.branch_arrays); ValueError for a model that does not generate, a text past
    its token limit, or a position, K or N out of bounds."""
    from model.branches import branch_arrays
    from model.families import Generates, open_model

    lab = open_model(model)
    if not isinstance(lab, Generates):
        raise ValueError(f"{model} does not generate text; --branch takes a decoder-only LLM")
    ids = lab.encode(text)
    if len(ids) > lab.max_tokens:
        raise ValueError(f"the text is {len(ids)} tokens; {model} takes 1 to {lab.max_tokens}")
    return branch_arrays(lab.fork_top(ids, position, top, steps))
def flow_arrays(model: str, text: str) -> dict[str, np.ndarray]:
    """flow_head (L, h, T) and flow_mlp (L, T) (the module docstring); ValueError for a model without a residual
    stream."""
    from model.explain.flow import information_flow
    from model.families import ReadsResidualStream, open_model

    lab = open_model(model)
    if not isinstance(lab, ReadsResidualStream):
        raise ValueError(f"{model} has no residual stream to read; --flow takes a decoder-only LLM")
    flow = information_flow(lab, text)
    return {"flow_head": flow.head_flow(), "flow_mlp": flow.mlp_flow()}


def finder_weight(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str],
                  find: tuple[str, str]) -> np.ndarray:
    """(L, h) float32: each head's weight in weights (L, h, T_q, T_k) from the first query token spelled find[0] to
    the first key token spelled find[1]; ValueError naming the tokens when either is not there."""
    from model.explain.head_finder import token_index

    query, key = find
    return np.asarray(weights[:, :, token_index(query_tokens, query), token_index(key_tokens, key)], dtype=np.float32)


def inspect_to_npz(model: str, text: str, out: str | Path, lens: bool = False, corrupt: str | None = None,
                   answer: str | None = None, wrong: str | None = None,
                   find: tuple[str, str] | None = None,
                   branch: tuple[int, int, int] | None = None,
                   switch_off: tuple[str, int] | None = None, flow: bool = False) -> dict[str, np.ndarray]:
    """Write the .npz described in the module docstring; returns what was written."""
    from model.gguf_weights import SMOLLM2_NAME

    # first, so that a refused answer or prompt pair costs no attention maps
    extra = residual_arrays(model, text, lens, corrupt, answer, wrong) if lens or corrupt is not None else {}
    if branch is not None:  # (POS, K, N)
        extra.update(branching_arrays(model, text, *branch))
    if switch_off is not None:  # (heads as "L.H,L.H", steps)
        from model.families import open_model
        from model.switch_off import generated_ids

        extra["generated_ids"] = generated_ids(open_model(model), text, *switch_off)
    if flow:
        extra.update(flow_arrays(model, text))
    if model == SMOLLM2_NAME:  # until its model/families.py adapter: llm_arrays is what that adapter will return
        arrays = {name: value if value.dtype.kind == "U" else np.asarray(value, dtype=np.float32)
                  for name, value in llm_arrays(text).items()}
        if find is not None:
            tokens = [str(token) for token in arrays["tokens"]]
            arrays["finder_weight"] = finder_weight(arrays["decoder_self"], tokens, tokens, find)
        arrays.update(extra)
        np.savez(out, **arrays)
        return arrays
    analysed, lab = _analyse_with_model(model, text)
    if find is not None:
        from model.explain.head_finder import default_kind

        maps = analysed.maps[default_kind(analysed, lab.layout)]
        extra["finder_weight"] = finder_weight(maps.weights, maps.query_tokens, maps.key_tokens, find)
    arrays = {"tokens": np.array(analysed.input_tokens, dtype=str)}
    for kind in lab.layout:  # the kinds of heads (a GRU's one alignment is not one)
        arrays[kind] = np.asarray(analysed.maps[kind].weights, dtype=np.float32)  # (layers, heads, queries, keys)
    if analysed.can(TRANSLATION):
        arrays["output_tokens"] = np.array(analysed.output_tokens, dtype=str)
        if "decoder_self" in analysed.maps:
            arrays["decoder_tokens"] = np.array(analysed.maps["decoder_self"].query_tokens, dtype=str)
    arrays.update({name: np.asarray(value, dtype=np.float32)
                   for name, value in explanation_arrays(analysed, lab).items()})
    arrays.update(extra)
    np.savez(out, **arrays)
    return arrays


def _or(given: int | None, default: int) -> int:
    return default if given is None else given


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m model.inspect", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="The .npz holds: tokens; encoder_self, decoder_self, cross (those the model has), each float32 "
               "(layers, heads, queries, keys), rows are queries and sum to 1; output_tokens and decoder_tokens "
               "for translation models; for models on our own modules also rollout_encoder_self, "
               "rollout_decoder_self (layers, queries, keys) and value_norms_<kind> (layers, heads, queries, "
               "keys); with --logit-lens lens_top_ids and lens_top_probs (L+1, T, 5), with --patch patch_residual "
               "(L, T), clean_prob and corrupt_prob, with --find finder_weight (L, h), with --branch branch_ids (K, N) and "
               "branch_probs (K,), with --switch-off generated_ids (N,) (the module's docstring). "
               "Models folder: the ATTENTION_LAB_MODELS environment variable or .streamlit/attention_lab.toml (see "
               "docs/models.md).")
    parser.add_argument("model", metavar="MODEL",
                        help="a shipped model (e.g. transformer_en-fr), all-MiniLM-L6-v2, SmolLM2-135M-Instruct "
                             "(decoder_self only: a decoder-only model), or a folder name in the models folder")
    parser.add_argument("text", metavar="TEXT", help="the sentence to analyse")
    parser.add_argument("--out", required=True, metavar="FILE.npz", help="where to write the arrays")
    parser.add_argument("--logit-lens", action="store_true",
                        help="add lens_top_ids and lens_top_probs (L+1, T, 5): each block's output read as the last")
    parser.add_argument("--patch", metavar="CORRUPT", help="a corrupted prompt of TEXT's token count: add "
                        "patch_residual (L, T), p(answer) with block l's output at t taken from TEXT's run")
    parser.add_argument("--answer", metavar="TOKEN", help="the answer token of --patch (one token, e.g. ' Paris')")
    parser.add_argument("--wrong", metavar="TOKEN", help="a wrong token: --patch adds logit(answer) − logit(wrong)")
    parser.add_argument("--find", nargs=2, metavar=("QUERY", "KEY"), help="add finder_weight (L, h): each head's "
                        "weight from the first token spelled QUERY to the first token spelled KEY")
    parser.add_argument("--branch", type=int, metavar="POS", help="add branch_ids (K, N) and branch_probs (K,): "
                        "TEXT's first POS tokens, then each of the K most likely tokens forced, greedy after it")
    parser.add_argument("--top", type=int, default=3, metavar="K", help="--branch's branches (1 … 5; 3 unless given)")
    parser.add_argument("--switch-off", metavar="L.H[,L.H...]", help="add generated_ids (N,): --steps greedy tokens "
                        "with those heads zeroed (1-based layer.head, e.g. 19.7,18.4)")
    parser.add_argument("--steps", type=int, metavar="N", help="tokens written per branch of --branch, the forced one "
                        f"included (1 … 32; {BRANCH_STEPS} unless given), or by --switch-off ({SWITCH_OFF_STEPS} unless "
                        "given)")
    parser.add_argument("--flow", action="store_true", help="add flow_head (L, h, T) and flow_mlp (L, T): each head's "
                        "and MLP's share of the last position's output, from each position (docs/models.md)")
    args = parser.parse_args(argv)
    if (args.patch is None) != (args.answer is None) or (args.wrong is not None and args.patch is None):
        parser.error("--patch CORRUPT and --answer TOKEN go together (--wrong TOKEN only with them)")
    from model.checkpoint import CheckpointError

    try:
        arrays = inspect_to_npz(args.model, args.text, args.out, args.logit_lens, args.patch, args.answer,
                                args.wrong, None if args.find is None else tuple(args.find),
                                None if args.branch is None else (args.branch, args.top, _or(args.steps, BRANCH_STEPS)),
                                None if args.switch_off is None else (args.switch_off,
                                                                      _or(args.steps, SWITCH_OFF_STEPS)),
                                flow=args.flow)
    except (ValueError, CheckpointError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    shapes = ", ".join(f"{name} {arrays[name].shape}" for name in ("encoder_self", "decoder_self", "cross")
                       if name in arrays)
    shapes += "".join(f", {name} {arrays[name].shape}" for name in ("lens_top_ids", "patch_residual", "finder_weight",
                                                                        "branch_ids", "generated_ids", "flow_head")
                      if name in arrays)
    print(f"{args.out}: {len(arrays['tokens'])} tokens; {shapes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
