"""The shared sidebar: model and sentence, kept across pages (widgets with keys in the entry point), and display."""
from __future__ import annotations

import streamlit as st

from i18n import LANGUAGES, tr
from model.checkpoint import CheckpointError
from ui.charts import CHART_WORDS, IMAGE_FORMAT, IMAGE_FORMATS
from ui.language import LANGUAGE
from ui.plotly_loader import PLOTLY_PRELOAD
from ui.presenter import presenting
from ui.models import device_label, local_model_entries
from ui.session import WidgetKey, lab_session, set_option_values_again
from ui.specs.common import LANGUAGE_SPEC, PRESENTER_SPEC
from model.capabilities import VOCABULARY
from ui.state import DEFAULT_MODEL, MODEL, example_sentences, get_model, model_label, selected_model_id
from ui.text import MAX_INPUT_CHARS, escape_markdown
from ui.vocabulary import SEARCH, vocabulary_help
from ui.widget_spec import SENTENCE, spec_segmented, spec_select, spec_toggle

EXAMPLE = WidgetKey("example")  # the example sentences' picker: a pick becomes the sentence

# Presenter mode's text colours, each at 7:1 (WCAG AAA) or more on the backgrounds it is drawn on (white, the
# sidebar's grey, a selected segment's and an alert's tint; tests/test_accessibility.py, and axe's
# color-contrast-enhanced rule in tests/test_browser_pages_walk.py). Outside presenter mode the theme
# (.streamlit/config.toml) keeps every text at 4.5:1 (AA): its captions (the text colour faded) are 4.9:1, too faint
# for the back of a room; here they are as dark as #333, and the selected segment and an alert's text darker than
# the theme's tint of them.
PRESENTER_COLOURS = {"text": "#111111", "faded": "#333333", "selected": "#7a1020"}
# Every mode: Streamlit draws a disabled widget's label at 40 % of the text colour (2.6:1). WCAG exempts inactive
# controls, but axe cannot tell (the label is not a form control) and a student still reads what the control is:
# greyer than a live label, at 5.3:1 on white.
DISABLED_LABEL = "#6b6b6b"
# The keyboard's focus is always visible (WCAG 2.4.7): a ring of the theme's primary colour (7.8:1 on white) round
# whatever Tab reached; Streamlit's own mark is faint on some widgets (a radio's, a tertiary button's).
FOCUS_RING = "#a11a2b"
# Chart text (ticks, axis titles, colour bars, legends, token labels): Streamlit's plotly theme draws all text a
# figure leaves uncoloured #808495 on white, 3.7:1 (axe does not read SVG text). Only that grey is replaced: text
# a chart colours itself (numbers inside cells) keeps its colour. 7:1, so projected charts reach AAA too.
THEME_CHART_GREY, CHART_TEXT = "rgb(128, 132, 149)", "#595959"
_APP_CSS = f"""<style>
.stApp [data-testid="stWidgetLabel"][disabled] {{ color: {DISABLED_LABEL} !important; }}
.stApp :focus-visible {{ outline: 3px solid {FOCUS_RING} !important; outline-offset: 2px !important; }}
.stApp .js-plotly-plot text[style*="fill: {THEME_CHART_GREY}"] {{ fill: {CHART_TEXT} !important; }}
.stApp .st-key-{PLOTLY_PRELOAD}, .stApp [data-testid="stLayoutWrapper"]:has(> .st-key-{PLOTLY_PRELOAD}) {{
  display: none !important; }}
</style>"""
# Presenter mode: larger text for the back of the room (static CSS only; no user text). Captions, labels and a
# metric's delta (Streamlit's grey of delta_color="off" is 5.5:1 on its chip) are darkened to 7:1, the projector's
# rule; a delta's sign and arrow still say which way it goes. The main block starts below
# Streamlit's header strip (3.75rem tall): at 2.5rem it covered the lesson bar's top. The lesson bar
# (ui/lesson_bar/bar.py, key lesson_bar) is thinner: the page's main chart starts higher. The sidebar's menu of pages
# keeps its desk size (Streamlit's 0.875rem): folded while projecting, it is the teacher's way between pages, not the
# room's reading, and at 1.25rem its place cut five page names short (tests/test_browser_pages_walk.py).
_PRESENTER_CSS = """<style>
.stApp, .stApp p, .stApp li, .stApp label, .stApp input, .stApp textarea { font-size: 1.25rem !important; }
.stApp .st-key-page_menu a p { font-size: 0.875rem !important; }
.stApp h1 { font-size: 3rem !important; }
.stApp h2, .stApp h3 { font-size: 2.1rem !important; }
.stApp code { font-size: 1.35rem !important; }
.stApp .katex { font-size: 1.5em !important; }
.stApp [data-testid="stMultiSelect"] span { font-size: 1rem !important; }
.stApp [data-testid="stMetricValue"], .stApp [data-testid="stMetricValue"] * { font-size: 2.6rem !important; }
.stApp [data-testid="stMainBlockContainer"] { padding-top: 4rem !important; }
.stApp .st-key-lesson_bar { padding-top: 0.5rem !important; padding-bottom: 0.5rem !important; }
""" + f"""[data-testid="stCaptionContainer"], .stApp [data-testid="stWidgetLabel"],
.stApp [data-testid="stWidgetLabel"][disabled], [data-testid="stTooltipHoverTarget"] {{
  color: {PRESENTER_COLOURS["faded"]} !important; opacity: 1 !important; }}
[data-testid="stMetricDelta"], [data-testid="stMetricDelta"] * {{ color: {PRESENTER_COLOURS["faded"]} !important; }}
[data-selected="true"] [data-testid="stMarkdownContainer"] p {{ color: {PRESENTER_COLOURS["selected"]} !important; }}
[data-testid="stAlertContainer"] [data-testid="stMarkdownContainer"] * {{ color: {PRESENTER_COLOURS["text"]} !important; }}
[class*="st-key-{CHART_WORDS}"] {{ position: absolute !important; width: 1px !important; height: 1px !important;
  overflow: hidden !important; clip-path: inset(50%) !important; white-space: nowrap !important; }}
</style>"""
FREE_TEXT_KEYS = {SENTENCE.key, SEARCH.key}  # text inputs: their value is what the user typed, not an option label


def _redraw_option_labels() -> None:
    """After a language switch, set every option widget's value again (to the same value).

    A selectbox or multiselect keeps, in the browser, the label it showed for its value; Streamlit sends a new
    label only when the value is set through the session state. Option values here are strings or lists (ids such as
    'cross' or 'Head'); numeric widgets have no translated labels, and free text is no label at all.
    """
    set_option_values_again(skipped={LANGUAGE, *FREE_TEXT_KEYS})


def display_settings() -> None:
    """Sidebar controls for language and presenter mode (both in links, drawn from their specs) and the chart image
    format (this user's preference, kept across pages but not in links)."""
    WidgetKey(IMAGE_FORMAT).setdefault(IMAGE_FORMATS[0])
    spec_segmented(LANGUAGE_SPEC, tr("display.language"), format_func=LANGUAGES.get, selection_mode="single",
                   on_change=_redraw_option_labels)
    spec_toggle(PRESENTER_SPEC, tr("display.presenter"), help=tr("display.presenter_help"))
    if not presenting():
        st.segmented_control(tr("display.image_format"), IMAGE_FORMATS, key=IMAGE_FORMAT, required=True,
                             format_func=str.upper, help=tr("display.image_format_help"))
    st.html(_APP_CSS)  # static CSS only
    if presenting():
        st.html(_PRESENTER_CSS)  # static CSS only; no user text


def _use_example() -> None:
    if EXAMPLE.get():
        SENTENCE.set(EXAMPLE.get())


def _model_changed() -> None:
    """A model of another task reads other words: start it on one of its own examples."""
    try:
        loaded = get_model(MODEL.get())
    except CheckpointError:
        return  # render_sidebar says why and goes back to the default model
    chosen = lab_session().input
    if chosen.sentence_task != loaded.task:
        SENTENCE.set(example_sentences(loaded.task)[0])
        chosen.sentence_task = loaded.task


def render_sidebar() -> None:
    chosen = selected_model_id()
    try:
        get_model(chosen)
    except CheckpointError as error:  # a models-folder entry that fails on opening (e.g. its sha256 pin)
        lab_session().input.model_error = str(error)
        chosen = DEFAULT_MODEL
    MODEL.set(chosen)
    with st.sidebar:
        display_settings()
        st.divider()
        # No format_func: the id is the label (AppTest and URLs see the same value); the family is captioned below.
        spec_select(MODEL, tr("sidebar.model"), on_change=_model_changed)
        error, lab_session().input.model_error = lab_session().input.model_error, None
        if error is not None:
            st.error(tr("bert.open_failed", error=escape_markdown(error)))
        unusable = [entry for entry in local_model_entries() if not entry.usable]
        if unusable:
            with st.expander(tr("bert.local_problems", count=len(unusable))):
                for entry in unusable:
                    st.text(f"{entry.name}: {entry.reason}")  # st.text: folder names are never markdown
        lab = get_model(MODEL.get())
        examples = example_sentences(lab.task)
        if not SENTENCE.is_set():
            SENTENCE.set(examples[0])
            lab_session().input.sentence_task = lab.task
        # A placeholder rather than a translated "" option: the options stay the same in every language.
        st.selectbox(tr("sidebar.example"), examples, index=None, placeholder=tr("sidebar.pick_one"), key=EXAMPLE.key,
                     on_change=_use_example)
        sentence_help = "sidebar.sentence_help" if lab.can(VOCABULARY) else "sidebar.sentence_help_subwords"
        st.text_input(tr("sidebar.sentence"), key=SENTENCE.key, max_chars=MAX_INPUT_CHARS, help=tr(sentence_help))
        if lab.can(VOCABULARY):  # a word list only where the model has a closed vocabulary (not a WordPiece encoder)
            vocabulary_help(lab.vocabulary)
        st.caption(tr("sidebar.caption", model=model_label(MODEL.get()), task=lab.task,
                      device=device_label()))
