"""LayerNorm/BatchNorm and residual pages: Korean, links that reproduce the view, bad links, presenter mode."""

import numpy as np
from streamlit.testing.v1 import AppTest

from i18n import translate
from model.foundations.normalization import normalization_demo
from model.foundations.residual import gradient_profile
from viz.presentation import BASE_FONT
from tests.app_links import chart_figures, open_from_link, trace_array

CSV = translate("en", "display.csv")


def _csv_buttons(at: AppTest) -> list:
    return [b for b in at.get("download_button") if b.proto.label == CSV]


def test_normalization_page_in_korean():
    at, notice = open_from_link("normalization", lang="ko")
    assert at.title[0].value == translate("ko", "normalization.title")
    texts = " ".join(m.value for m in at.markdown)
    assert translate("ko", "normalization.intro") in texts and translate("ko", "normalization.padding") in texts
    assert at.slider(key="norm_batch").label == translate("ko", "normalization.batch")
    assert "시점별 BatchNorm" in at.radio(key="norm_kind").options
    assert translate("ko", "normalization.table.kind") in at.dataframe[0].value.columns
    grid, stats, before_after = chart_figures(at)
    assert grid.layout.xaxis.title.text == "특징"
    assert grid.layout.title.text.startswith("입력: 테두리")
    assert stats.layout.annotations[0].text == "평균"
    assert "문장" in before_after.layout.yaxis.title.text
    at.slider(key="norm_batch").set_value(1).run()
    at.slider(key="norm_len").set_value(1).run()
    assert not at.exception
    assert at.error[0].value.startswith("**BatchNorm이 실패합니다.**") and "Expected more than 1" in at.error[0].value
    assert at.success[0].value.startswith("**LayerNorm은 동작합니다.**")


def test_residual_page_in_korean():
    at, notice = open_from_link("residual", lang="ko")
    assert at.title[0].value == translate("ko", "residual.title")
    assert translate("ko", "residual.intro") in " ".join(m.value for m in at.markdown)
    assert [m.label for m in at.metric] == ["1번 층 ÷ 32번 층: 스킵 없음: f(x)", "1번 층 ÷ 32번 층: 스킵 있음: x + f(x)"]
    (chart,) = chart_figures(at)
    assert chart.layout.xaxis.title.text.startswith("층 번호")
    assert [trace.name for trace in chart.data] == ["스킵 없음: f(x)", "스킵 있음: x + f(x)"]


def test_a_link_reproduces_batch_norm_failing_on_one_token():
    at, notice = open_from_link("normalization", {"batch": "1", "len": "1", "features": "4", "norm": "batch",
                                                  "norm_feat": "2", "norm_seed": "7"})
    assert not notice  # every value fits
    assert (at.slider(key="norm_batch").value, at.slider(key="norm_len").value, at.slider(key="norm_d").value) == \
        (1, 1, 4)
    assert at.radio(key="norm_kind").value == "batch" and at.selectbox(key="norm_feature").value == 2
    assert at.number_input(key="norm_seed").value == 7
    assert "BatchNorm fails" in at.error[0].value
    grid, stats, _ = chart_figures(at)
    expected = normalization_demo(1, 1, 4, "batch", seed=7)
    np.testing.assert_allclose(trace_array(grid.data[0].z), expected.x[0])
    assert [(s.x0, s.x1) for s in grid.layout.shapes] == [(2.5, 3.5)]  # feature 3 outlined
    assert list(trace_array(stats.data[1].y)) == [0.0] * 4  # every BatchNorm variance is 0
    # and the address bar keeps describing the view as it changes
    assert at.query_params["norm"] == "batch" and at.query_params["norm_feat"] == "2"
    at.slider(key="norm_len").set_value(5).run()
    assert at.query_params["len"] == "5" and "depth" not in at.query_params


def test_a_link_reproduces_the_residual_view():
    at, notice = open_from_link("residual", {"depth": "8", "act": "relu", "res_seed": "3", "ln": "true"})
    assert not notice
    assert at.slider(key="res_depth").value == 8 and at.radio(key="res_activation").value == "relu"
    assert at.toggle(key="res_ln").value is True and at.number_input(key="res_seed").value == 3
    profile = gradient_profile(8, "relu", seed=3)
    assert [m.value for m in at.metric] == [f"{profile.first_over_last(w):.3g}"
                                            for w in ("plain", "residual", "residual_ln")]
    (chart,) = chart_figures(at)
    assert "8 layers of relu" in chart.layout.title.text and len(chart.data) == 3
    np.testing.assert_allclose(trace_array(chart.data[1].y), profile.residual)


def test_garbage_link_values_fall_back_to_the_defaults_with_a_notice():
    bad = {"batch": "0", "len": "abc", "features": "99", "norm": "<script>", "norm_seq": "-1", "norm_feat": "x",
           "norm_seed": "1e9"}
    at, notice = open_from_link("normalization", bad)
    assert "do not fit" in notice and all(name in notice for name in bad)
    assert (at.slider(key="norm_batch").value, at.slider(key="norm_len").value, at.slider(key="norm_d").value,
            at.radio(key="norm_kind").value, at.number_input(key="norm_seed").value) == (4, 6, 6, "layer", 0)
    assert len(at.get("plotly_chart")) == 3 and not at.error

    at, notice = open_from_link("residual", {"depth": "1000", "act": "sigmoid", "ln": "maybe", "res_seed": "-5"})
    assert "do not fit" in notice and all(name in notice for name in ("depth", "act", "ln", "res_seed"))
    assert (at.slider(key="res_depth").value, at.radio(key="res_activation").value, at.toggle(key="res_ln").value) \
        == (32, "tanh", False)
    assert len(at.metric) == 2


def test_presenter_mode_hides_the_seed_caption_and_downloads_and_keeps_the_seed():
    at, notice = open_from_link("normalization", {"presenter": "true", "norm_seed": "5"})
    assert not [n for n in at.number_input if n.key == "norm_seed"]
    assert translate("en", "normalization.table_caption") not in [c.value for c in at.caption]
    assert not _csv_buttons(at)
    specs = chart_figures(at)
    assert len(specs) == 3 and all(s.layout.font.size == BASE_FONT for s in specs)
    expected = normalization_demo(4, 6, 6, "layer", seed=5)  # the hidden seed still counts
    np.testing.assert_allclose(trace_array(specs[0].data[0].z)[expected.mask[0]],
                               expected.x[0][expected.mask[0]], rtol=1e-6)
    at.session_state["presenter"] = False
    at.run()
    assert at.number_input(key="norm_seed").value == 5 and len(_csv_buttons(at)) == 3
    assert translate("en", "normalization.table_caption") in [c.value for c in at.caption]

    at, notice = open_from_link("residual", {"presenter": "true"})
    assert not [n for n in at.number_input if n.key == "res_seed"]
    assert translate("en", "residual.setup") not in [c.value for c in at.caption] and not _csv_buttons(at)
    (chart,) = chart_figures(at)
    assert chart.layout.font.size == BASE_FONT and len(at.metric) == 2
    at.toggle(key="res_ln").set_value(True).run()  # the teacher's switch stays on screen
    assert len(at.metric) == 3
