"""Seq2seq vs Transformer: the same sentence through three models, and accuracy against sentence length."""
import streamlit as st

from ui.compare_view import length_chart, long_sentence_demo, side_by_side

st.title("Seq2seq vs Transformer")
st.write("Three models trained on the same English→French data: a GRU encoder–decoder that must squeeze the "
         "whole sentence into one fixed vector, the same GRU with Bahdanau attention, and a Transformer. Compare "
         "their translations, their alignments, and how each copes as sentences grow longer (Bahdanau et al. "
         "2015, Fig. 2: without attention, quality collapses with length).")

side_by_side()
length_chart()
long_sentence_demo()
