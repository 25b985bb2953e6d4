"""Specs of what every page shares: the language (ui/language.py) and presenter mode (ui/presenter.py), the
sidebar's model and sentence (ui/sidebar.py), and the training running in this tab (ui/train/view.py)."""
from __future__ import annotations

import re

from i18n import DEFAULT_LANGUAGE, LANGUAGES
from ui.language import LANGUAGE
from ui.presenter import PRESENTER
from ui.state import MODEL
from ui.widget_spec import SENTENCE, WidgetSpec, boolean

# The model id of the training running in this session, in the URL of every page while it runs (not in "Link to
# this view": it belongs to this tab): a session that starts with it but has no such job (its server process died
# and serve.py's HAProxy moved the student to another replica, or the tab was reloaded) says the training is lost.
TRAINING_IN_URL = "training_in_url"
_TRAINING_ID = re.compile(r"my-[A-Za-z0-9_-]{1,80}")  # runtime.training_jobs.start_job's model ids


def training_id(text: str) -> str:
    if not _TRAINING_ID.fullmatch(text):
        raise ValueError(text)
    return text


LANGUAGE_SPEC = WidgetSpec(LANGUAGE, "lang", DEFAULT_LANGUAGE, options=LANGUAGES)
PRESENTER_SPEC = WidgetSpec(PRESENTER, "presenter", False, options=(False, True), convert=boolean)
TRAINING = WidgetSpec(TRAINING_IN_URL, "training", None, convert=training_id)
SPECS = (LANGUAGE_SPEC, PRESENTER_SPEC, MODEL, SENTENCE, TRAINING)
