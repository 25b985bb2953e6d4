"""Train a small model in the browser, watch it learn, then open it on every other page."""
import streamlit as st

from i18n import tr
from ui.presenter import explanation, page_title
from ui.train.view import download_buttons, launch, live_status, snapshot_viewer, training_form, upload_form

page_title(tr("train.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the form and its chart higher
    st.write(tr("train.intro"))

config = training_form()
if config is not None:
    launch(config)
live_status()
snapshot_viewer()
download_buttons()
upload_form()
