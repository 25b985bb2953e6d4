"""Home: the story of the app and the shipped models with their measured test metrics."""
import pandas as pd
import streamlit as st

from model.checkpoint import CheckpointError
from ui.models import FAMILY_LABELS, device_label, shipped_model_info, shipped_model_names

st.title("Attention Lab")
st.write(
    "Look inside real, trained models to see how attention works: an RNN that squeezes a sentence into one "
    "vector, the same RNN with Bahdanau attention, and a Transformer whose every head and layer you can open."
)
st.caption(f"Models run on: {device_label()}")

st.subheader("The story")
st.markdown(
    "1. **An RNN reads the sentence into one vector.** The encoder–decoder of Sutskever et al. (2014) must squeeze "
    "everything into a single fixed-length context vector, and long sentences suffer.\n"
    "2. **Attention lets the decoder look back.** Bahdanau et al. (2015) score every source word at every output "
    "step, e = vᵀ tanh(W s + U h), and read a weighted average instead of one vector.\n"
    "3. **The Transformer keeps only attention.** Vaswani et al. (2017): scaled dot-product attention, many heads, "
    "layer after layer, with positions added as sinusoids."
)
st.page_link("app_pages/attention.py", label="Open every head of a trained Transformer", icon=":material/grid_on:")
st.page_link("app_pages/decoding.py", label="Watch the decoder write one token at a time", icon=":material/skip_next:")

rows = []
for name in shipped_model_names():
    try:
        info = shipped_model_info(name)
    except CheckpointError as error:
        st.error(f"Could not read the shipped model {name}: {error}")
        continue
    test, long_test = info["metrics"].get("test", {}), info["metrics"].get("long_test", {})
    rows.append({
        "model": name, "family": FAMILY_LABELS[info["family"]], "task": info["task"], "parameters": info["parameters"],
        "test exact match": test.get("exact_match"), "test BLEU": test.get("bleu"),
        "long-sentence exact match": long_test.get("exact_match"), "long-sentence BLEU": long_test.get("bleu"),
    })
if rows:
    st.subheader("Shipped models")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in
                                ("test exact match", "long-sentence exact match")}
                 | {c: st.column_config.NumberColumn(format="%.1f") for c in ("test BLEU", "long-sentence BLEU")})
else:
    st.warning("No shipped models found in assets/checkpoints.")
