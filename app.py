"""Attention Lab: entry point (page config, shared sidebar, navigation)."""
import streamlit as st

from ui.sidebar import render_sidebar

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")

pages = {
    "Start": [st.Page("pages/home.py", title="Home", icon="🏠", default=True)],
    "Attention": [
        st.Page("pages/attention.py", title="Transformer attention", icon="🔥"),
        st.Page("pages/decoding.py", title="Decoding step by step", icon="⏯️"),
    ],
}
navigation = st.navigation(pages)
render_sidebar()
navigation.run()
