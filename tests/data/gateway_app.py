"""A small Streamlit app for tests/test_gateway.py: one st.cache_data entry it shows, and an uploader."""
import secrets

import streamlit as st


@st.cache_data
def stamp() -> str:
    return secrets.token_hex(8)  # a new value each time the cache is emptied


st.write(f"stamp {stamp()}")
st.file_uploader("file", key="file")
