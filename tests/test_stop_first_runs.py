"""What a lesson stop computes is computed once per process, whatever the session's language or presenter mode
(issue 38 item 5: after the warm-up no first click waits): the residual and softmax-scaling stops' sweeps, a measure
read by a Korean session after an English one, and the answer page's patching sweep, which its page and its stop's
measures read from one entry of the app's store."""
from types import SimpleNamespace

import pytest

from classroom.measures import MEASURES, Phrase, llm_answer
from i18n import using_language
from tests.app_links import open_page
from runtime.result_cache import RESULTS

# Each test here counts what this process computes: the store's folder tier is off for them (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("computed_here")


def _counting(monkeypatch, module, name: str) -> list:
    calls, real = [], getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("page_name, module, function, query", [
    ("residual", "model.foundations.residual", "gradient_profile", {"depth": "32", "act": "tanh"}),
    ("softmax_scaling", "model.foundations.scaling", "dot_product_samples", {"dk": "512"}),
])
def test_a_foundations_stops_sweep_runs_once_for_every_session(monkeypatch, page_name, module, function, query):
    """Two sessions at the stop's view (a student's, then the projected teacher's in Korean): one computation."""
    import importlib

    RESULTS.drop(lambda key: isinstance(key[0], str) and key[0].startswith(page_name))
    calls = _counting(monkeypatch, importlib.import_module(module), function)
    open_page(page_name, query)
    open_page(page_name, {**query, "lang": "ko", "presenter": "true"})
    assert len(calls) == 1


def test_a_measure_is_found_once_for_every_language(monkeypatch):
    """A number (the keys a causal mask lets a query see) and an answer whose feedback states the measured value in
    words are each found once: the measure says its words as Phrase, and each session words them in its own language
    (issue 54: the domain writes no interface text)."""
    from ui.lessons import measured
    from ui.lessons.catalogue import lessons

    found = lessons()[0]
    by_compute = {stop.question.compute: stop for lesson in found.values() for stop in lesson.stops
                  if stop.question is not None and stop.question.compute}
    taken = _counting(monkeypatch, measured, "take")
    for name in ("causal_visible_keys", "lowest_long_sentence_model"):
        measured._found.clear()
        before = len(taken)
        answers, said = [], []
        for language in ("en", "ko", "en"):
            with using_language(language):
                answers.append(measured.computed_answer(by_compute[name]))
                said.append(measured.worded(answers[-1].measured))
        assert len(taken) - before == 1, name
        if name == "lowest_long_sentence_model":  # the same Phrase, worded in each language
            assert isinstance(answers[0].measured, Phrase) and said[0] == said[2] != said[1] and "%" in said[1]
        assert answers[0] == answers[2] and answers[0].shown == answers[1].shown


def test_the_answer_pages_sweep_and_its_stops_measures_are_one_computation(monkeypatch):
    """The patching section's sweep (ui/llm/answer.show_patching asks residual_sweep) and the stop's measures read
    one entry of the app's byte-bounded store: the default pair is swept once per process, not once more in a cache
    of the measures' own."""
    from ui.llm import answer as page

    runs = []

    def sweep(lab, clean, corrupt, answer, wrong, progress=None):
        runs.append((clean, corrupt, answer, wrong))
        return SimpleNamespace(clean_prob=0.75, corrupt_prob=0.25)

    monkeypatch.setattr(llm_answer, "residual_patching", sweep)
    lab = SimpleNamespace(model_id="a test's LLM")
    RESULTS.drop(lambda key: "a test's LLM" in key)
    assert page.residual_sweep is llm_answer.residual_sweep
    drawn = page.residual_sweep(lab, "The capital of France is", "The capital of Italy is", " Paris", None)
    view = {"clean": "The capital of France is", "corrupt": "The capital of Italy is", "answer": " Paris",
            "difference": False, "wrong": " Rome"}
    recovered = MEASURES["patching_recovered"].function(lab, llm_answer.StopView.of(view), {})
    assert recovered == pytest.approx(0.5) and len(runs) == 1
    assert any(key[-5:] == ("a test's LLM", *runs[0]) for key in RESULTS.keys())
    assert llm_answer.residual_sweep(lab, *runs[0]) is drawn


def test_the_three_induction_measures_of_a_stop_read_one_analysis(monkeypatch):
    """intro's induction stop asks a band, states a layer and bounds a score: one analysis of the repeated sequence
    (the one the LLM heads page draws too, classroom/measures/llm.shared_induction)."""
    import numpy as np
    import torch

    from classroom.measures import checked_args, llm

    runs = []

    def analysis(model, vocab_size, length, seed):
        runs.append((length, seed))
        scores = np.zeros((4, 3))
        scores[2, 1] = 0.9  # (L, H): the strongest head is L3 H2
        return SimpleNamespace(scores=scores), torch.zeros(4, 3, 2 * length, 2 * length)  # (L, H, T, T)

    monkeypatch.setattr(llm, "induction_analysis_with_weights", analysis)
    lab = SimpleNamespace(model_id="a test's induction LLM", network=SimpleNamespace(
        name="a test's induction LLM", model=None, config=SimpleNamespace(vocab_size=10)))
    RESULTS.drop(lambda key: "a test's induction LLM" in key)
    view = llm.StopView.of({"ind_len": 20, "ind_seed": 0})
    assert MEASURES["induction_layer"].function(lab, view, {}) == 3
    band = MEASURES["induction_layer_band"]
    assert band.function(lab, view, checked_args(band, {"bands": [[1, 2], [3, 4]]})).shown == "2"
    assert MEASURES["induction_score"].function(lab, view, {}) == pytest.approx(0.9)
    assert runs == [(20, 0)]
