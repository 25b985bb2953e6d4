"""Attention Lab: entry point. The page's configuration, then the app's one run (ui/run.py owns its order)."""
from pathlib import Path

import streamlit as st

from ui.run import run_app

# A local favicon: a material-icon favicon is fetched from a font CDN, and the app must work offline.
st.set_page_config(page_title="Attention Lab", page_icon=str(Path(__file__).parent / "assets" / "favicon.png"),
                   layout="wide")
run_app()
