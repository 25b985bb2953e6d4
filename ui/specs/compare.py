"""Specs of the seq2seq-vs-Transformer page: declared in ui/compare_view.py, beside the widgets and the model
shapes they read (a module here that it imported back would close an import circle)."""
from ui.compare_view import PAGE, SECTIONS, SPECS  # noqa: F401
