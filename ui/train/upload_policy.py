"""Whether this server takes checkpoint uploads on the train page: the one place that decides.

The operator turns them off with the environment variable ATTENTION_LAB_UPLOADS=off, or in
.streamlit/attention_lab.toml (the file that names the models folder, model/local_models.py):

    [uploads]
    enabled = false

The environment wins over the file, as it does for the models folder. A teacher also turns uploads off for the
students of her live class (the Teacher page's switch, stored with the class). The page asks one function,
uploads_refusal(), which also says why.
"""
from __future__ import annotations

import os
import tomllib

import streamlit as st

from model import local_models
from ui.lessons.classroom import class_store
from ui.lessons.bar import CLASS_CODE

ENV_VAR = "ATTENTION_LAB_UPLOADS"
ON_WORDS = frozenset({"on", "1", "true", "yes", "enabled"})


def _configured_in_file() -> bool | None:
    """[uploads] enabled from the settings file; None when the file does not say."""
    try:
        text = local_models.CONFIG_FILE.read_text(encoding="utf-8")
        enabled = tomllib.loads(text).get("uploads", {}).get("enabled")
    except (OSError, tomllib.TOMLDecodeError, AttributeError):  # AttributeError: [uploads] is not a table
        return None
    if enabled is None or isinstance(enabled, bool):
        return enabled
    return False  # enabled = "no" or 0: the operator meant to say something, and only true opens uploads


def operator_allows_uploads() -> bool:
    """True unless the operator turned uploads off (environment, then settings file). Read at each call, so a
    setting changed in the file takes effect at the next page run."""
    configured = os.environ.get(ENV_VAR, "").strip().lower()
    if configured:
        # Any value but an "on" word is off: an operator who set the variable meant to control uploads, and a
        # typo ("of") must not leave them open.
        return configured in ON_WORDS
    return _configured_in_file() is not False


def uploads_refusal() -> str | None:
    """None when this session may upload; else the i18n key of why not (the operator, or this student's class)."""
    if not operator_allows_uploads():
        return "train.uploads_off"
    code = st.session_state.get(CLASS_CODE)
    session = class_store().session(code) if code else None
    if session is not None and not session.uploads:
        return "train.uploads_off_class"
    return None


def uploads_allowed() -> bool:
    return uploads_refusal() is None
