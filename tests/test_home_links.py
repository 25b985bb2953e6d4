"""Home points a newcomer at each shipped lesson and at the real encoder, and each opens what it promises."""
from tests.app_links import open_from_link


def test_home_opens_the_guided_lesson_at_its_first_stop_on_the_default_model():
    at, _ = open_from_link("home", {"model": "all-MiniLM-L6-v2"})  # a teacher who had picked the real encoder
    button = next(b for b in at.button if b.label.startswith("Follow the guided lesson"))
    button.click().run()
    at.run()  # the lesson bar switches to the stop's page on the next run
    assert not at.exception
    assert any("stop 1 of 18" in m.value for m in at.markdown), [m.value for m in at.markdown][:5]
    assert at.session_state["model_id"] == "transformer_en-fr"  # the stop's model, not the one picked before


def test_home_opens_each_shipped_lesson_at_its_first_stop():
    for label, stops in (("Follow the lesson “From the 2017 Transformer", 9), ("Follow the lesson “How an LLM", 4)):
        at, _ = open_from_link("home")
        next(b for b in at.button if b.label.startswith(label)).click().run()
        at.run()
        assert not at.exception
        assert any(f"stop 1 of {stops}" in m.value for m in at.markdown), (label, [m.value for m in at.markdown][:5])


def test_home_links_to_the_real_encoder_with_an_english_sentence():
    at, _ = open_from_link("home")
    links = {link.label: link for link in at.get("page_link")}
    label = next(name for name in links if "real pretrained encoder" in name)
    assert "all-MiniLM-L6-v2" in label
