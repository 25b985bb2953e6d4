"""The front end's floor beside the lab's pages in bench/lecture_moves.py --start-up: a Streamlit page with nothing of
the lab's, served by the same Streamlit (`streamlit run bench/streamlit_floor.py`). `?chart=plotly` adds one 8×8
heatmap drawn by Streamlit's own st.plotly_chart, which fetches and runs its 4.7 MB Plotly chunk as every lab page
with a chart does: the least a new tab on any charted stop can cost on the machine that runs the browser."""
import streamlit as st

st.markdown("A bare Streamlit page.")
if st.query_params.get("chart") == "plotly":
    import numpy as np
    import plotly.graph_objects as go

    st.plotly_chart(go.Figure(go.Heatmap(z=np.random.default_rng(0).random((8, 8)))))
