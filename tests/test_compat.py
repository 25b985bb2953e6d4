"""One test per wrapper in serving/internals.py, and one for the internal the tests read (tests/app_links.fragment_ids): a
Streamlit or plotly upgrade that moves an internal fails here, by name."""
import threading

import plotly.graph_objects as go
from streamlit.testing.v1 import AppTest

from tests.app_links import fragment_ids
from serving.internals import data_editor_cell_parser, figure_from_own_dict, in_script_run, session_alive_check


def test_in_script_run_is_false_outside_and_true_inside_a_script_run():
    assert in_script_run() is False
    at = AppTest.from_string(
        "import streamlit as st\nfrom serving.internals import in_script_run\nst.write(str(in_script_run()))")
    at.run()
    assert not at.exception and at.markdown[0].value == "True"


def test_session_alive_check_outside_a_server_is_always_true():
    check = session_alive_check()
    assert check() is True
    seen = []
    worker = threading.Thread(target=lambda: seen.append(check()))  # it is meant to be called from a thread
    worker.start()
    worker.join()
    assert seen == [True]


def test_figure_from_own_dict_equals_the_figure_it_came_from():
    figure = go.Figure(go.Heatmap(z=[[0.25, 0.75], [1.0, 0.0]], x=["a", "b"], y=["c", "d"]))
    figure.update_layout(title="layer 2 · head 4")
    rebuilt = figure_from_own_dict(figure.to_dict())
    assert isinstance(rebuilt, go.Figure)
    assert rebuilt.to_plotly_json() == figure.to_plotly_json()


def test_data_editor_cell_parser_reads_numbers_and_refuses_words():
    parse = data_editor_cell_parser()
    assert parse("3.5") == 3.5 and parse("-1e3") == -1000.0
    assert parse("not a number") is None


def test_fragment_ids_names_the_fragment_of_a_page():
    at = AppTest.from_string("import streamlit as st\n@st.fragment\ndef part():\n    st.write('x')\npart()")
    at.run()
    assert len(fragment_ids(at)) == 1


def _new_session_theme():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime import app_session

    msg = ForwardMsg()
    theme = msg.new_session.custom_theme
    for section, part in (("theme", theme), ("theme.light", theme.light), ("theme.dark", theme.dark),
                          ("theme.sidebar", theme.sidebar), ("theme.light.sidebar", theme.light.sidebar),
                          ("theme.dark.sidebar", theme.dark.sidebar)):
        app_session._populate_theme_msg(part, section)
    return msg


def test_the_session_theme_is_built_once_per_reading_of_the_config(monkeypatch):
    import copy

    from streamlit import config
    from streamlit.runtime import app_session

    from serving.internals import build_session_theme_once

    config.get_config_options()
    monkeypatch.setattr(app_session, "_populate_theme_msg", app_session._populate_theme_msg)  # undone after
    built_by_streamlit = _new_session_theme()
    walks = []
    walk = config.get_options_for_section
    monkeypatch.setattr(config, "get_options_for_section", lambda section: walks.append(section) or walk(section))
    build_session_theme_once()
    build_session_theme_once()  # twice: still one wrapper
    first, second = _new_session_theme(), _new_session_theme()
    assert first == second == built_by_streamlit
    assert first.new_session.HasField("custom_theme") == built_by_streamlit.new_session.HasField("custom_theme")
    assert len(walks) == 6  # one walk per section, on the first run only
    options = copy.deepcopy(config._config_options)  # the config read again, with a theme colour
    options["theme.primaryColor"].set_value("#123456")
    monkeypatch.setattr(config, "_config_options", options)
    assert _new_session_theme().new_session.custom_theme.primary_color == "#123456"
    assert len(walks) == 12


def test_a_streamlit_without_the_theme_internal_starts_without_the_saving(monkeypatch):
    from streamlit.runtime import app_session

    from serving.internals import build_session_theme_once

    monkeypatch.delattr(app_session, "_populate_theme_msg")
    build_session_theme_once()  # another Streamlit version: no error at start, nothing patched
    assert not hasattr(app_session, "_populate_theme_msg")


def test_the_door_was_written_for_the_installed_streamlit_and_plotly():
    """serving/internals.py reaches names these libraries do not promise to keep: each was checked against these
    versions. An upgrade fails here until that file has been read again against the new one (and WRITTEN_FOR set)."""
    import plotly
    import streamlit

    from serving.internals import WRITTEN_FOR

    assert {"streamlit": streamlit.__version__, "plotly": plotly.__version__} == WRITTEN_FOR, (
        "another Streamlit or plotly than serving/internals.py was written for: read it against the new version")
