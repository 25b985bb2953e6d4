"""Attention Lab: entry point (page config, navigation)."""
import streamlit as st

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")

pages = {
    "Start": [st.Page("pages/home.py", title="Home", icon="🏠", default=True)],
}
st.navigation(pages).run()
