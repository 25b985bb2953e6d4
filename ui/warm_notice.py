"""Home's note while the server warms itself (serving/warmup.py): shown only then, and gone when the warm-up ends."""
from __future__ import annotations

import streamlit as st

from i18n import tr
from serving.warmup import is_warming
from ui.errors import lab_fragment

POLL_SECONDS = 3.0  # how often an open Home asks whether the warm-up has ended


def warming_notice() -> None:
    """The note, where the server is warming itself; nothing (and no polling) otherwise."""
    if is_warming():
        _notice()


@lab_fragment(run_every=POLL_SECONDS)
def _notice() -> None:
    if is_warming():
        st.info(tr("home.warming"), icon=":material/hourglass_top:")
    else:  # done: Home once more, drawn without the note and without this fragment's polling
        st.rerun()
