"""Home: the story of the app and the shipped models with their measured test metrics."""
import streamlit as st

from i18n import tr
from model.checkpoint import CheckpointError
from ui.presenter import page_title
from ui.specs.common import MODEL
from ui.widget_spec import SENTENCE
from ui.models import PRETRAINED_MODELS, family_label, device_label, shipped_model_info, shipped_model_names
from ui.lesson_bar.picker import open_lesson_button
from ui.lessons.catalogue import saved_lesson_titles
from ui.state import example_sentences
from ui.text import escape_markdown, markdown_table
from ui.warm_notice import warming_notice

page_title(tr("home.title"))
warming_notice()
st.write(tr("home.intro"))
st.caption(tr("home.device", device=device_label()))

st.subheader(tr("home.story_title"))
st.markdown(tr("home.story"))
st.page_link("app_pages/attention.py", label=tr("home.link_attention"), icon=":material/grid_on:")
st.page_link("app_pages/decoding.py", label=tr("home.link_decoding"), icon=":material/skip_next:")
st.page_link("app_pages/positional.py", label=tr("home.link_foundations"), icon=":material/school:")
st.page_link("app_pages/llm_answer.py", label=tr("home.link_llm_answer"), icon=":material/lightbulb:")
open_lesson_button("intro", tr("home.link_lesson"))
open_lesson_button("llm", tr("home.link_llm_lesson"))
open_lesson_button("answer", tr("home.link_answer_lesson"))
for saved_id, saved_title in saved_lesson_titles().items():  # the teachers' own lessons (issue 57), after the shipped
    open_lesson_button(saved_id, tr("lesson_builder.home_link", title=escape_markdown(saved_title)))
st.page_link("app_pages/attention.py", label=tr("home.link_real_encoder", model=PRETRAINED_MODELS[0]),
             icon=":material/psychology:",
             query_params={MODEL.url: PRETRAINED_MODELS[0], SENTENCE.url: example_sentences("english")[0]})

columns = {name: tr(f"home.column_{name}") for name in ("model", "family", "task", "parameters", "test_exact",
                                                          "test_bleu", "long_exact", "long_bleu")}
rows = []
for name in shipped_model_names():
    try:
        info = shipped_model_info(name)
    except CheckpointError as error:
        st.error(tr("home.unreadable", name=name, error=str(error)))
        continue
    test, long_test = info["metrics"].get("test", {}), info["metrics"].get("long_test", {})
    values = {"model": name, "family": family_label(info["family"]), "task": info["task"],
              "parameters": info["parameters"], "test_exact": test.get("exact_match"), "test_bleu": test.get("bleu"),
              "long_exact": long_test.get("exact_match"), "long_bleu": long_test.get("bleu")}
    rows.append({columns[k]: v for k, v in values.items()})
if rows:  # a static table (ui/text.markdown_table): a new tab of Home loads no data grid
    st.subheader(tr("home.models_title"))
    st.markdown(markdown_table(rows, {columns[c]: "{:.3f}" for c in ("test_exact", "long_exact")}
                               | {columns[c]: "{:.1f}" for c in ("test_bleu", "long_bleu")}))
    st.caption(tr("home.models_caption"))
else:
    st.warning(tr("home.no_models"))
