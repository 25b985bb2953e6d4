"""Seq2seq vs Transformer: the same sentence through three models, and accuracy against sentence length."""
import streamlit as st

from i18n import tr
from ui.compare_view import length_chart, long_sentence_demo, side_by_side

st.title(tr("compare.title"))
st.write(tr("compare.intro"))

side_by_side()
length_chart()
long_sentence_demo()
