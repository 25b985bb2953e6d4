"""Shipped models are shared by every session of a server: the app's analyses must never change their weights.

The analyses run exactly as the pages call them (ui.state.shared_analysis, with and without heads switched off, here through
__wrapped__ so every call really computes instead of hitting st.cache_data), on the model that ui.models.load_model
returns,
sequentially and from several threads at once (one server thread per session runs scripts).
"""
from concurrent.futures import ThreadPoolExecutor

import pytest

from model.checkpoint import load_checkpoint
from model.config import TransformerConfig
from model.checkpoint import state_dict_sha256
from ui.models import CHECKPOINT_DIR, cached_model, shipped_model_names
from ui.state import shared_analysis

SENTENCES = ["i am a student", "the small cat eats the red apple", "she is a student", "we like the big green trees",
             "zzz unknown words"]
REVERSE_SENTENCES = ["3 1 4 15 9", "1 2 3", "7"]


def _ablations(config: TransformerConfig) -> list[tuple[tuple[str, int, int], ...]]:
    """No head off, one head off, and every head of every kind off."""
    every = tuple((kind, layer, head) for kind in ("encoder_self", "decoder_self", "cross")
                  for layer in range(config.num_layers) for head in range(config.num_heads))
    return [(), (("cross", config.num_layers - 1, 1),), every]


def _run_analyses(name: str, lab) -> list[list[str]]:
    loaded = lab.network
    sentences = REVERSE_SENTENCES if loaded.task == "reverse" else SENTENCES
    outputs = []
    for sentence in sentences:
        outputs.append(shared_analysis.__wrapped__(name, sentence, lab).output_tokens)
        if isinstance(loaded.config, TransformerConfig):
            for switched_off in _ablations(loaded.config):
                outputs.append(shared_analysis.__wrapped__(name, sentence, lab, switched_off).output_tokens)
    return outputs


@pytest.fixture(scope="module", params=shipped_model_names())
def shipped(request):
    name = request.param
    return name, cached_model.__wrapped__(name)  # the loader the server caches with st.cache_resource


def _assert_frozen(loaded):
    """A shared model as sessions must find it: in eval mode, with no parameter that would take a gradient."""
    assert not loaded.model.training
    assert not any(p.requires_grad for p in loaded.model.parameters())


def test_loader_returns_the_checkpoint_frozen_and_in_eval_mode(shipped):
    name, lab = shipped
    loaded = lab.network
    assert state_dict_sha256(loaded.model.state_dict()) == \
        state_dict_sha256(load_checkpoint(CHECKPOINT_DIR / name).model.state_dict())
    _assert_frozen(loaded)


def test_analyses_leave_the_shared_model_unchanged(shipped):
    name, lab = shipped
    loaded = lab.network
    before = state_dict_sha256(loaded.model.state_dict())
    outputs = _run_analyses(name, lab)
    assert outputs and all(isinstance(tokens, list) for tokens in outputs)
    assert state_dict_sha256(loaded.model.state_dict()) == before
    _assert_frozen(loaded)


def test_concurrent_sessions_get_the_same_answers_and_leave_the_model_unchanged(shipped):
    name, lab = shipped
    loaded = lab.network
    before = state_dict_sha256(loaded.model.state_dict())
    expected = _run_analyses(name, lab)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda _: _run_analyses(name, lab), range(3)))
    assert all(result == expected for result in results)
    assert state_dict_sha256(loaded.model.state_dict()) == before


def test_a_loading_model_says_so_in_the_users_language(monkeypatch):
    """load_model's message is the user's language's (st.cache_resource's own spinner text is one fixed string)."""
    import contextlib

    import ui.models
    from i18n import translate

    shown: list[str] = []
    monkeypatch.setattr(ui.models.st, "spinner", lambda text: (shown.append(text), contextlib.nullcontext())[1])
    monkeypatch.setattr(ui.models, "tr", lambda key, **values: translate("ko", key, **values))
    monkeypatch.setattr(ui.models, "_loaded", set())  # as in a fresh server: an earlier test may have loaded it here
    name = shipped_model_names()[0]
    assert ui.models.load_model(name) is cached_model(name, "")  # the cached copy, shared by every session
    assert shown == [translate("ko", "models.loading", model=name)] and name in shown[0]
    assert shown[0] != translate("en", "models.loading", model=name)
