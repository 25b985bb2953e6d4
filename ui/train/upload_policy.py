"""Whether this server takes checkpoint uploads on the train page: the one place that decides.

The operator turns them off with the environment variable ATTENTION_LAB_UPLOADS=off, or in
.streamlit/attention_lab.toml (the file that names the models folder, model/local_models.py):

    [uploads]
    enabled = false

The environment wins over the file, as it does for the models folder. A teacher also turns uploads off for the
students of her live class (the Teacher page's switch, stored with the class). The page asks one function,
uploads_refusal(), which also says why. The operator's setting is read in serving/upload_gate.py, where Streamlit's
upload route asks it too; the page opens that route for its session only while it draws the uploader
(open_upload_route).
"""
from __future__ import annotations

import functools


from serving.upload_gate import ENV_VAR, GATE, operator_allows_uploads
from serving.internals import script_session_id
from ui.seat import class_store
from ui.session import lab_session

__all__ = ["ENV_VAR", "operator_allows_uploads", "uploads_refusal", "uploads_allowed", "open_upload_route"]


def class_refusal(code: str | None) -> str | None:
    """None when a session in class `code` (None: in no class) may upload; else the i18n key of why not."""
    if not operator_allows_uploads():
        return "train.uploads_off"
    session = class_store().session(code) if code else None
    if session is not None and not session.uploads:
        return "train.uploads_off_class"
    return None


def uploads_refusal() -> str | None:
    """None when this session may upload; else the i18n key of why not (the operator, or this student's class)."""
    return class_refusal(lab_session().seat.code)


def uploads_allowed() -> bool:
    return uploads_refusal() is None


def open_upload_route(is_open: bool) -> None:
    """Open Streamlit's upload route for this session while its page shows the uploader, close it otherwise
    (serving/upload_gate.py). An open route asks the class store again at each upload, so the teacher's switch
    closes it at once."""
    session_id = script_session_id()
    if session_id is None:
        return
    if is_open:
        code = lab_session().seat.code
        GATE.open_for(session_id, functools.partial(class_allows_uploads, code))
    else:
        GATE.close_for(session_id)


def class_allows_uploads(code: str | None) -> bool:
    return class_refusal(code) is None
