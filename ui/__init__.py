"""Streamlit glue: cached loaders, session state and shared widgets."""
