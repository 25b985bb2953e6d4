"""Train a small model in the browser, watch it learn, then open it on every other page."""
import streamlit as st

from ui.train_view import download_buttons, launch, live_status, snapshot_viewer, training_form, upload_form

st.title("Train your own model")
st.write("Pick a model family and a task, then train it here. Watch the loss fall and the validation accuracy "
         "rise, and see a head's attention pattern form over the snapshots. The defaults give a useful en-fr "
         "Transformer in about a minute; when it finishes it appears in the sidebar for every other page.")

config = training_form()
if config is not None:
    launch(config)
live_status()
snapshot_viewer()
download_buttons()
upload_form()
