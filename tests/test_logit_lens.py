"""The logit lens and residual-stream patching (model/explain/logit_lens.py, patching.py) as `python -m model.inspect`
writes them, against transformers' LlamaForCausalLM on the same GGUF file: its output_hidden_states through its own
final norm and lm_head for the lens, forward hooks on its decoder layers for the patching (tests/test_llama.py: how
the reference is opened). A 5-token pair keeps the sweep (30 × 5 runs) to seconds.
"""
import numpy as np
import pytest
import torch

from model.explain.logit_lens import commitment_layers, lens_cell, lens_column, logit_lens
from model.explain.patching import patched_run, residual_patching
from model.families import adapt
from model.gguf_weights import SMOLLM2_NAME
from model.inspect import main
from model.llama import load_smollm2

CLEAN, CORRUPT = "The capital of France is", "The capital of Italy is"  # 5 tokens each, differing at position 3
ANSWER, WRONG = " Paris", " Rome"
TOLERANCE = dict(rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def lab():
    return adapt(SMOLLM2_NAME, load_smollm2())


@pytest.fixture(scope="module")
def written(tmp_path_factory, lab):
    """The .npz of one inspect run with the lens and the patching of CLEAN from CORRUPT."""
    out = tmp_path_factory.mktemp("inspect") / "lens.npz"
    assert main([SMOLLM2_NAME, CLEAN, "--logit-lens", "--patch", CORRUPT, "--answer", ANSWER, "--wrong", WRONG,
                 "--out", str(out)]) == 0
    return dict(np.load(out))


@pytest.fixture(scope="module")
def sweep(lab):
    """The sweep without a wrong token, and the progress calls it made."""
    calls = []
    return residual_patching(lab, CLEAN, CORRUPT, ANSWER, progress=lambda done, total: calls.append((done, total))), calls


def _output(value):
    """A decoder layer's hidden states, whether transformers returns them alone or first in a tuple."""
    return value[0] if isinstance(value, tuple) else value


@pytest.mark.slow  # loads transformers' reference model (about 20 s)
def test_the_lens_npz_matches_transformers_hidden_states_through_its_norm_and_lm_head(written, lab, reference):
    ids = lab.encode(CLEAN)
    with torch.no_grad():
        out = reference(torch.tensor([ids]), output_hidden_states=True)
        hidden = torch.stack(out.hidden_states)[:, 0]  # (L+1, T, d); the last one is already after the final norm
        logits = torch.cat([reference.lm_head(reference.model.norm(hidden[:-1])), out.logits])  # (L+1, T, V)
    top = torch.softmax(logits, -1).topk(5)
    assert written["lens_top_ids"].shape == written["lens_top_probs"].shape == (31, len(ids), 5)
    assert written["lens_top_ids"].dtype.kind == "i" and written["lens_top_probs"].dtype == np.float32
    assert (written["lens_top_ids"] == top.indices.numpy()).all()
    torch.testing.assert_close(torch.from_numpy(written["lens_top_probs"]), top.values, **TOLERANCE)
    assert lab.token_texts([int(written["lens_top_ids"][-1, -1, 0])]) == [ANSWER]  # the model's own answer, row L


@pytest.mark.slow  # loads transformers' reference model
def test_the_patching_npz_matches_forward_hooks_on_transformers_decoder_layers(written, lab, reference):
    clean, corrupt = lab.encode(CLEAN), lab.encode(CORRUPT)
    answer, wrong, length = lab.encode(ANSWER)[0], lab.encode(WRONG)[0], len(clean)
    layers = reference.model.layers
    captured = []  # each decoder layer's output in the clean run, (1, T, d)
    handles = [layer.register_forward_hook(lambda module, args, output: captured.append(_output(output).clone()))
               for layer in layers]
    try:
        with torch.no_grad():
            ends = reference(torch.tensor([clean, corrupt])).logits[:, -1]  # (2, V)
    finally:  # the reference is the worker's (tests/conftest.py): no hook outlives this test
        for handle in handles:
            handle.remove()
    probs, diffs = np.empty((len(layers), length)), np.empty((len(layers), length))
    for index, layer in enumerate(layers):
        def patch(module, args, output, index=index):  # run b takes position b from the clean run
            hidden = _output(output).clone()
            rows = torch.arange(length)
            hidden[rows, rows] = captured[index][0, rows]
            return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

        handle = layer.register_forward_hook(patch)
        try:
            with torch.no_grad():
                logits = reference(torch.tensor([corrupt] * length)).logits[:, -1]  # (T, V): one run per position
        finally:
            handle.remove()
        probs[index] = torch.softmax(logits, -1)[:, answer].numpy()
        diffs[index] = (logits[:, answer] - logits[:, wrong]).numpy()
    assert written["patch_residual"].shape == (30, length) and written["patch_residual"].dtype == np.float32
    np.testing.assert_allclose(written["patch_residual"], probs, rtol=0, atol=1e-4)
    np.testing.assert_allclose(written["patch_logit_diff"], diffs, rtol=0, atol=1e-4)
    end_probs = torch.softmax(ends, -1)[:, answer].numpy()
    np.testing.assert_allclose([written["clean_prob"], written["corrupt_prob"]], end_probs, rtol=0, atol=1e-4)
    np.testing.assert_allclose([written["clean_logit_diff"], written["corrupt_logit_diff"]],
                               (ends[:, answer] - ends[:, wrong]).numpy(), rtol=0, atol=1e-4)


def test_patching_moves_the_answer_only_where_the_prompts_differ(written):
    """The pair differs at ' France' / ' Italy' (position 3) only: patching that cell in early blocks restores
    ' Paris', the shared tokens change nothing, and the last block's last position is the clean run itself."""
    patched, clean, corrupt = written["patch_residual"], float(written["clean_prob"]), float(written["corrupt_prob"])
    assert clean > 0.5 and corrupt < 0.01
    np.testing.assert_allclose(patched[:, :3], corrupt, rtol=0, atol=1e-5)  # "The capital of" is the same text
    assert patched[0, 3] > 0.5 and patched[-1, 3] < 0.01  # the country's cell matters early, not after the last block
    assert patched[-1, -1] == pytest.approx(clean, abs=1e-6)
    assert written["patch_logit_diff"][0, 3] > 0 > float(written["corrupt_logit_diff"])


def test_a_single_patched_run_is_the_sweeps_cell(lab, sweep):
    from model.explain.patching import matched_streams

    sweep, _ = sweep
    clean, corrupt = matched_streams(lab, CLEAN, CORRUPT)
    for layer, position in ((0, 3), (12, 4), (29, 4)):
        logits = patched_run(lab, clean, corrupt, layer, position)  # (V,)
        assert float(torch.softmax(logits, -1)[sweep.answer_id]) == pytest.approx(
            float(sweep.patched_probs[layer, position]), abs=1e-5)
    assert sweep.patched_logit_diffs is None and sweep.wrong_id is None


def test_blocks_from_reruns_the_blocks_after_a_row_of_the_residual_stream(lab):
    ids = torch.tensor([lab.encode(CLEAN)])
    model = lab.network.model
    stream = model.residual_stream(ids)  # (L+1, 1, T, d)
    torch.testing.assert_close(model.blocks_from(0, stream[0]), stream[-1], rtol=0, atol=1e-5)
    torch.testing.assert_close(model.blocks_from(17, stream[17]), stream[-1], rtol=0, atol=1e-5)
    last = stream[30]
    assert model.blocks_from(30, last) is last  # after the last block nothing runs


def test_progress_counts_every_run(sweep):
    _, calls = sweep
    assert calls[-1] == (150, 150) and all(total == 150 for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_prompts_of_different_token_counts_are_refused_with_both_tokenizations(tmp_path, capsys):
    out = tmp_path / "refused.npz"
    assert main([SMOLLM2_NAME, CLEAN, "--patch", "The capital of Italy, is", "--answer", ANSWER,
                 "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "same number of tokens" in error and "Traceback" not in error
    assert "['The', ' capital', ' of', ' France', ' is']" in error
    assert "['The', ' capital', ' of', ' Italy', ',', ' is']" in error
    assert not out.exists()


def test_an_answer_of_several_tokens_is_refused_naming_them(tmp_path, capsys, lab):
    out = tmp_path / "refused.npz"
    assert main([SMOLLM2_NAME, CLEAN, "--patch", CORRUPT, "--answer", " Parisian", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "must be one token" in error and "[' Paris', 'ian']" in error and "Traceback" not in error
    assert not out.exists()
    with pytest.raises(ValueError, match="wrong token"):
        residual_patching(lab, CLEAN, CORRUPT, ANSWER, wrong=" Rome and Milan")


def test_commitment_is_the_first_layer_from_which_the_final_top_token_stays_on_top():
    top1 = np.array([[1, 6, 7],  # rows: embeddings, blocks 1 … 3; columns: positions
                     [2, 5, 7],
                     [5, 6, 7],
                     [3, 6, 7]])
    # position 0 gets its token only at the last row; position 1 has it at row 0, loses it, and keeps it from row 2;
    # position 2 has it from the embeddings on
    assert commitment_layers(top1).tolist() == [3, 2, 0]


def test_the_lens_of_a_chosen_token_agrees_with_its_top_tokens(lab):
    paris = lab.encode(ANSWER)[0]
    lens = logit_lens(lab, CLEAN, token_id=paris)
    assert lens.layers == 30 and lens.tokens == ["The", " capital", " of", " France", " is"]
    on_top = lens.top_ids[..., 0] == paris  # (L+1, T)
    assert ((lens.token_ranks == 1) == on_top).all()
    np.testing.assert_allclose(lens.token_probs[on_top], lens.top_probs[..., 0][on_top], rtol=0, atol=1e-6)
    assert lens.token_ranks[-1, -1] == 1 and lens.token_ranks[0, -1] > 100  # formed late, as the lesson shows
    assert 0 < lens.commitment[-1] <= 30 and (lens.commitment == commitment_layers(lens.top_ids[..., 0])).all()
    assert logit_lens(lab, CLEAN).token_ranks is None


def test_a_column_and_a_cell_read_alone_are_the_grids_own(lab):
    """What the page opens with (the last position, every row) and a clicked cell are computed without the grid
    (issue 56: their price is L+1 unembeddings and one): the same numbers as the grid's column and cell."""
    paris = lab.encode(ANSWER)[0]
    stream = lab.residual_stream(CLEAN)
    grid = logit_lens(lab, CLEAN, token_id=paris, stream=stream)
    for position in (-1, 1):
        column = lens_column(lab, stream.hidden, position, token_id=paris)
        at = position % len(grid.tokens)
        assert column.position == at and column.commitment == grid.commitment[at]
        np.testing.assert_array_equal(column.top_ids, grid.top_ids[:, at])
        np.testing.assert_allclose(column.top_probs, grid.top_probs[:, at], rtol=0, atol=1e-6)
        np.testing.assert_array_equal(column.token_ranks, grid.token_ranks[:, at])
        np.testing.assert_allclose(column.token_probs, grid.token_probs[:, at], rtol=0, atol=1e-6)
    ids, probs = lens_cell(lab, stream.hidden, 12, 3, k=10)
    assert ids[:5] == grid.top_ids[12, 3].tolist() and len(ids) == len(probs) == 10
    # one vector goes through a matrix-vector product, summed in another order than the grid's matmul: 2e-6 apart
    np.testing.assert_allclose(probs[:5], grid.top_probs[12, 3], rtol=0, atol=1e-5)
    assert probs == sorted(probs, reverse=True)
    with pytest.raises(IndexError):
        lens_cell(lab, stream.hidden, grid.layers + 1, 0)
    with pytest.raises(IndexError):
        lens_column(lab, stream.hidden, len(grid.tokens))
