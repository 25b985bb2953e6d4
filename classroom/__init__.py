"""The class, live: lesson files and the shared answer store (pure Python: never imports streamlit)."""
