"""Pure chart builders: arrays and DataFrames in, plotly figures out. Never imports streamlit."""
