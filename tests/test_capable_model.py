"""ui.models.capable_model, which both LLM pages open their model with: the model where it loads and has the page's
capability; otherwise None and one message in the user's language, an error naming the model and the loading error, or
a notice naming the model. No model is loaded here: load_model is replaced by what a failing or a lesser model does."""
from types import SimpleNamespace

import pytest

import ui.models
from i18n import translate
from model.capabilities import GENERATION, RESIDUAL_STREAM

PAGES = [(RESIDUAL_STREAM, "llm_answer.unavailable", "llm_answer.no_residual_stream"),
         (GENERATION, "llm.unavailable", "llm.no_generation")]


@pytest.fixture
def shown(monkeypatch) -> dict[str, list[str]]:
    """What capable_model shows, by kind; its messages in Korean, as a Korean reader's session gets them."""
    messages: dict[str, list[str]] = {"error": [], "info": []}
    monkeypatch.setattr(ui.models.st, "error", messages["error"].append)
    monkeypatch.setattr(ui.models.st, "info", messages["info"].append)
    monkeypatch.setattr(ui.models, "tr", lambda key, **values: translate("ko", key, **values))
    return messages


def _model_with(*capabilities: str) -> SimpleNamespace:
    return SimpleNamespace(can=lambda capability: capability in capabilities)


@pytest.mark.parametrize("capability, unavailable, lacking", PAGES)
def test_a_model_that_cannot_load_is_an_error_naming_it_and_why(monkeypatch, shown, capability, unavailable,
                                                                 lacking):
    def missing(model_id: str):
        raise OSError("no weights at /models/*tiny*")

    monkeypatch.setattr(ui.models, "load_model", missing)
    assert ui.models.capable_model("tiny-llm", capability, unavailable, lacking) is None
    # the error text is escaped for markdown: its asterisks would otherwise turn into italics
    assert shown == {"error": [translate("ko", unavailable, model="tiny-llm",
                                         error=r"no weights at /models/\*tiny\*")], "info": []}
    assert "tiny-llm" in shown["error"][0]


@pytest.mark.parametrize("capability, unavailable, lacking", PAGES)
def test_a_model_without_the_pages_capability_is_a_notice_naming_it(monkeypatch, shown, capability, unavailable,
                                                                  lacking):
    other = next(name for name in (GENERATION, RESIDUAL_STREAM) if name != capability)
    monkeypatch.setattr(ui.models, "load_model", lambda model_id: _model_with(other))
    assert ui.models.capable_model("tiny-llm", capability, unavailable, lacking) is None
    assert shown == {"error": [], "info": [translate("ko", lacking, model="tiny-llm")]}
    assert "tiny-llm" in shown["info"][0]


@pytest.mark.parametrize("capability, unavailable, lacking", PAGES)
def test_a_capable_model_is_returned_without_a_message(monkeypatch, shown, capability, unavailable, lacking):
    lab = _model_with(capability)
    monkeypatch.setattr(ui.models, "load_model", lambda model_id: lab)
    assert ui.models.capable_model("tiny-llm", capability, unavailable, lacking) is lab
    assert shown == {"error": [], "info": []}
