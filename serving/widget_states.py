"""What the front end reports for each widget it has drawn, for serving/streamlit_client.py's browser without a front
end: the widget kinds it knows, the state of a widget just drawn (the server's value when it sets one, else the
widget's default), and the user key inside a widget's id."""
from __future__ import annotations

from serving.internals import WidgetState

WIDGET_KINDS = {"selectbox", "text_input", "text_area", "button_group", "multiselect", "slider", "checkbox",
                "radio", "number_input", "button", "download_button", "color_picker", "date_input", "time_input",
                "file_uploader", "camera_input", "chat_input", "menu_button", "pagination", "feedback"}

def default_widget_state(kind: str, proto) -> WidgetState | None:
    """The state the front end reports for a widget it has just drawn (the server's value when set_value)."""
    state = WidgetState(id=proto.id)
    set_value = getattr(proto, "set_value", False)
    if kind == "selectbox" or kind == "radio":
        if set_value:
            if proto.HasField("raw_value"):
                state.string_value = proto.raw_value
        elif proto.HasField("default") and 0 <= proto.default < len(proto.options):
            state.string_value = proto.options[proto.default]
    elif kind in ("text_input", "text_area"):
        if set_value:
            if proto.HasField("value"):
                state.string_value = proto.value
        elif proto.HasField("default"):
            state.string_value = proto.default
    elif kind == "button_group":
        values = list(proto.raw_values) if set_value else [proto.options[i].content for i in proto.default]
        state.string_array_value.data[:] = values
    elif kind == "multiselect":
        values = list(proto.raw_values) if set_value else [proto.options[i] for i in proto.default]
        state.string_array_value.data[:] = values
    elif kind == "slider":
        if proto.options:  # st.select_slider: option labels
            values = list(proto.raw_value) if set_value else [proto.options[int(i)] for i in proto.default]
            state.string_array_value.data[:] = values
        else:
            state.double_array_value.data[:] = list(proto.value if set_value else proto.default)
    elif kind == "checkbox":
        state.bool_value = proto.value if set_value else proto.default
    elif kind == "expandable":  # an expander with a state: open or not, as the server drew it
        state.bool_value = proto.expanded
    elif kind == "number_input":
        value = proto.value if set_value and proto.HasField("value") else (
            proto.default if proto.HasField("default") else None)
        if value is not None:
            if proto.data_type == type(proto).INT:
                state.int_value = int(value)
            else:
                state.double_value = value
    else:  # buttons (trigger values only when clicked) and widgets these pages do not use: no state
        return None
    return state


def user_key(widget_id: str) -> str | None:
    """'$$ID-<hash>-<user key>' -> user key (same rule as streamlit.runtime.state.common)."""
    key = widget_id.split("-", maxsplit=2)[-1]
    return None if key == "None" else key
