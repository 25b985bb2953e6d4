"""Chart export (CSV of a chart's numbers, image file names and format), presenter styling, and the URL state that
every page shares (language, presenter mode, model)."""
import io
import json

import numpy as np
import pandas as pd
import pytest

from i18n import translate
from tests.app_links import open_page
from ui.charts import copy_of_own_figure
from ui.language import words_for
from viz.attention import attention_heatmap, attention_lines, head_grid, probability_bars
from viz.chart_data import chart_data
from viz.export import chart_csv, chart_table
from viz.presentation import BASE_FONT, SEQUENTIAL_SAFE, fit_title, for_projection


def test_heatmap_csv_is_the_token_labelled_matrix_and_formula_safe():
    tokens = ["=cmd", "<b>x</b>", "=cmd"]
    fig = attention_heatmap(np.array([[1.0, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]), tokens, ["a", "+1", "c"],
                            masked=np.triu(np.ones((3, 3), bool), 1), words=words_for("attention"))
    table = pd.read_csv(io.BytesIO(chart_csv(chart_data(fig))), encoding="utf-8-sig", index_col=0)
    # Repeated query tokens stay apart; nothing starts with a formula character; HTML escaping is undone.
    assert list(table.index) == ["0: =cmd", "1: <b>x</b>", "2: =cmd"]
    assert list(table.columns) == ["a", "'+1", "c"]
    assert table.iloc[2].tolist() == [0.2, 0.3, 0.5]
    assert np.isnan(table.iloc[0, 1])  # a masked cell is empty, not a weight


def test_csv_of_lines_bars_and_grids_is_a_long_table():
    bars = chart_table(chart_data(probability_bars(["je", "-tu"], [0.7, 0.2], words=words_for("attention"))))
    assert bars[["x", "y"]].values.tolist() == [[0.7, "je"], [0.2, "'-tu"]]
    grid = chart_table(chart_data(head_grid(np.random.default_rng(0).random((2, 3, 4, 4)), list("abcd"),
                                            list("abcd"), words=words_for("attention"))))
    assert set(grid["series"]) == {f"L{l} H{h}" for l in (1, 2) for h in (1, 2, 3)} and len(grid) == 6 * 16
    # the lines view's numbers are the weights it draws (its lines and token labels are drawing aids)
    lines = chart_table(chart_data(attention_lines(np.eye(3), list("abc"), list("xyz"), words=words_for("attention"))))
    assert lines.to_numpy().tolist() == np.eye(3).tolist() and list(lines.columns) == list("xyz")


def test_projection_style_is_larger_and_colour_blind_safe_and_leaves_the_original():
    fig = attention_heatmap(np.eye(3), list("abc"), list("abc"), "t", words=words_for("attention"))
    shown = for_projection(fig)
    assert shown.layout.font.size == BASE_FONT and shown.layout.height > fig.layout.height
    assert shown.data[0].colorscale != fig.data[0].colorscale
    assert shown.data[0].colorscale[0][1].lower() == "#00224e"  # Cividis starts dark blue
    assert fig.layout.font.size is None  # a cached figure is never changed
    assert SEQUENTIAL_SAFE == "Cividis"


def test_the_unvalidated_copy_shows_exactly_what_the_validated_copy_shows():
    """show_chart wraps a title on a copy made through serving.internals (no second validation, ~10x cheaper); the figure
    drawn must not change."""
    long_title = "Cross-attention at step 3 · layer 1 · all heads, averaged over the heads"
    figures = [attention_heatmap(np.random.default_rng(1).random((4, 5)), list("abcd"), list("vwxyz"), long_title,
                                 words=words_for("attention")),
               head_grid(np.random.default_rng(2).random((2, 2, 3, 3)), list("abc"), list("abc"), title=long_title,
                         words=words_for("attention"))]
    for fig in figures:
        before = json.loads(fig.to_json())
        cheap, validated = fit_title(fig, 20, copy=copy_of_own_figure), fit_title(fig, 20)
        assert cheap is not fig and json.loads(cheap.to_json()) == json.loads(validated.to_json())
        assert "<br>" in cheap.layout.title.text  # wrapped: a copy was made and changed
        assert json.loads(fig.to_json()) == before  # the figure given is never changed


def _chart_config(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.config)


def test_image_export_names_the_file_and_follows_the_format_setting():
    at = open_page("positional")
    config = _chart_config(at)
    assert config["toImageButtonOptions"]["format"] == "png"
    assert config["toImageButtonOptions"]["filename"].startswith("attention-lab_")
    at.session_state["image_format"] = "svg"
    at.run()
    assert _chart_config(at)["toImageButtonOptions"]["format"] == "svg"
    csv_buttons = [b for b in at.get("download_button") if b.proto.label == translate("en", "display.csv")]
    assert csv_buttons, "every chart offers its numbers as CSV"


def test_presenter_mode_from_a_link_enlarges_charts_and_hides_downloads():
    at = open_page("positional", {"presenter": "true"})
    assert at.session_state["presenter"] is True
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["font"]["size"] == BASE_FONT
    assert not [b for b in at.get("download_button") if b.proto.label == translate("en", "display.csv")]
    assert any("font-size" in h.proto.body for h in at.get("html"))


def test_korean_link_switches_the_interface_and_is_kept_in_the_url():
    at = open_page("home", {"lang": "ko"})
    assert at.sidebar.text_input[0].label == translate("ko", "sidebar.sentence")
    assert at.title[0].value == translate("ko", "home.title")
    assert at.query_params["lang"] == "ko"
    at.session_state["lang"] = "en"
    at.run()
    assert at.title[0].value == translate("en", "home.title") and "lang" not in at.query_params


def test_garbage_link_values_fall_back_with_a_notice():
    at = open_page("home", {"lang": "xx", "presenter": "maybe", "model": "../../etc/passwd", "pe_d": "7"})
    notice = " ".join(i.value for i in at.info)
    for name in ("lang", "presenter", "model", "pe_d"):
        assert name in notice
    assert at.session_state["lang"] == "en" and not at.session_state["presenter"]
    assert at.session_state["model_id"] == "transformer_en-fr"


def test_a_page_writes_only_its_own_parameters():
    at = open_page("positional", {"pe_d": "128", "depth": "40"})  # depth belongs to the residual page
    assert at.query_params.get("pe_d") == "128" and "depth" not in at.query_params


def test_long_titles_wrap_at_spaces_when_projected():
    from viz.presentation import wrap_title

    korean = "트랜스포머 크로스 어텐션(cross-attention), 1층, 헤드 평균 — 아주 긴 제목이라서 잘리지 않아야 합니다"
    lines = wrap_title(korean).split("<br>")
    assert len(lines) > 1 and " ".join(lines) == korean  # nothing lost, broken only at spaces
    assert wrap_title("short title") == "short title"
    fig = for_projection(attention_heatmap(np.eye(2), ["a", "b"], ["a", "b"], korean, words=words_for("attention")))
    assert "<br>" in fig.layout.title.text and fig.layout.title.automargin


def test_a_copy_of_a_figure_holds_its_data_and_a_figure_without_data_is_refused():
    """copy_of_own_figure (show_chart's copy for a wrapped title) rebuilds a figure from plotly's dict, which keeps
    none of the figure's own attributes: the copy holds the chart's data all the same, so its CSV and words are the
    original's. A figure built outside viz/ holds none, and asking for its CSV or words is an error, not a guess."""
    from serving.internals import figure_from_own_dict

    for fig in (attention_heatmap(np.random.default_rng(1).random((4, 3)), list("abcd"), ["x", "=y", "z"],
                                  words=words_for("attention")),
                head_grid(np.random.default_rng(2).random((2, 2, 3, 3)), list("abc"), list("xyz"),
                          words=words_for("attention")),
                probability_bars(["je", "tu"], [0.7, 0.2], words=words_for("attention"))):
        copy = copy_of_own_figure(fig)
        assert copy is not fig and chart_data(copy) is chart_data(fig)
        with pytest.raises(TypeError, match="ChartData"):
            chart_data(figure_from_own_dict(fig.to_dict()))


def _draw_one_shared_chart_twice():
    """An app: the same shared figure drawn by show_chart in two runs (presenter mode from the session), its JSON
    before and after each draw and whether the second run got the very object of the first."""
    import json

    import numpy as np
    import streamlit as st

    from ui.charts import shared_figure, show_chart
    from ui.language import words_for
    from ui.presenter import PRESENTER
    from viz.attention import attention_heatmap

    long_title = "Cross-attention at step 3 · layer 1 · all heads, averaged over the heads"
    st.session_state[PRESENTER] = st.session_state.get("presenter_next", False)
    fig = shared_figure(("test_display_share", "heatmap"),
                        lambda: attention_heatmap(np.eye(3) * 0.5 + 0.1, list("abc"), list("xyz"), long_title,
                                                  words=words_for("attention")))
    before = json.loads(fig.to_json())
    show_chart(fig, "shared", key="shared")
    st.session_state.setdefault("figures", []).append(fig)  # kept alive: no id reused by a later object
    st.session_state.setdefault("unchanged", []).append(json.loads(fig.to_json()) == before)


def test_a_shared_figure_is_one_object_for_all_runs_and_drawing_it_changes_nothing():
    """shared_figure hands every session the same figure (bench/README.md, the server's cost per interaction), so
    show_chart must only read it: a wrapped title and presenter mode work on copies."""
    from streamlit.testing.v1 import AppTest

    from ui.text import escape_markdown
    from viz.summary import chart_summary

    at = AppTest.from_function(_draw_one_shared_chart_twice, default_timeout=60).run()
    at.session_state["presenter_next"] = True
    at.run()
    assert not at.exception
    assert at.session_state["unchanged"] == [True, True]  # the plain draw and the projected one
    first, second = at.session_state["figures"]
    assert first is second  # one figure, not a copy per run
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "<br>" in spec["layout"]["title"]["text"] and spec["layout"]["font"]["size"] == BASE_FONT  # copies drawn
    fig = attention_heatmap(np.eye(3) * 0.5 + 0.1, list("abc"), list("xyz"),
                            "Cross-attention at step 3 · layer 1 · all heads, averaged over the heads",
                            words=words_for("attention"))
    # the words computed with it
    assert escape_markdown(chart_summary(chart_data(fig), words=words_for("display"))) in [c.value for c in at.caption]


def test_a_shared_figure_is_made_ready_to_draw_once_per_way_of_showing_it():
    """Issue 38 item 6: after a Reveal every student of the class draws the stop's chart; the shown copy of a shared
    figure (its title wrapped, or projected; its labels thinned) is made once per process and way of showing it and
    is the same object for every session, while another way of showing it (projected, a column) gets its own."""
    from ui.charts import SHARED_KEY, _as_shown, _shown_shared, shared_figure

    long_title = "Cross-attention at step 3 · layer 1 · all heads, averaged over the heads, for every student"
    fig = shared_figure(("test_display_share", "shown once"),
                        lambda: attention_heatmap(np.eye(3) * 0.5 + 0.1, list("abc"), list("xyz"), long_title,
                                                  words=words_for("attention")))
    key = getattr(fig, SHARED_KEY)
    assert key == (("test_display_share", "shown once"), "en")
    plain = _shown_shared(key, False, False, 820, fig)
    assert plain is not fig and "<br>" in plain.layout.title.text  # a copy, its title wrapped; fig left as it was
    assert "<br>" not in fig.layout.title.text
    assert _shown_shared(key, False, False, 820, fig) is plain  # the next session gets the very same object
    assert chart_data(plain) is chart_data(fig)  # holding the data the figure was drawn from (its CSV, its words)
    projected = _shown_shared(key, True, False, 820, fig)
    assert projected is not plain and projected.layout.font.size == BASE_FONT
    assert _shown_shared(key, False, True, 400, fig) is not plain  # a column: its own width
    # what it draws is what the page drew before it was kept: the same figure as made afresh
    assert plain.to_json() == _as_shown(fig, False, False, 820).to_json()
    # the dict st.plotly_chart serialises is made once too (a student's question redraws the chart at every tick of
    # her poll after the Reveal); plain.to_json() above is made from it
    assert plain.to_dict() is plain.to_dict()
