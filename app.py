"""Attention Lab: entry point (page config, shared sidebar, navigation)."""
from pathlib import Path

import streamlit as st

from ui.errors import page_guard
from ui.share import restore_from_url, share_link, show_url_notice, write_to_url
from ui.sidebar import render_sidebar

# A local favicon: a material-icon favicon is fetched from a font CDN, and the app must work offline.
st.set_page_config(page_title="Attention Lab", page_icon=str(Path(__file__).parent / "assets" / "favicon.png"),
                   layout="wide")

pages = {
    "Start": [st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Foundations": [
        st.Page("app_pages/positional.py", title="Positional encoding", icon=":material/timeline:"),
        st.Page("app_pages/softmax_scaling.py", title="Softmax scaling (√d_k)", icon=":material/functions:"),
        st.Page("app_pages/attention_steps.py", title="Attention step by step", icon=":material/calculate:"),
        st.Page("app_pages/normalization.py", title="LayerNorm vs BatchNorm", icon=":material/equalizer:"),
        st.Page("app_pages/residual.py", title="Residual connections", icon=":material/alt_route:"),
    ],
    "Attention": [
        st.Page("app_pages/attention.py", title="Transformer attention", icon=":material/grid_on:"),
        st.Page("app_pages/decoding.py", title="Decoding step by step", icon=":material/skip_next:"),
    ],
}
pages["Models"] = [st.Page("app_pages/compare.py", title="Seq2seq vs Transformer", icon=":material/compare:")]
pages["Train"] = [st.Page("app_pages/train.py", title="Train a model", icon=":material/model_training:")]
navigation = st.navigation(pages)
with page_guard():
    restore_from_url()
    render_sidebar()
    show_url_notice()
    navigation.run()
    write_to_url()
    with st.sidebar:
        share_link()
