"""Serving a whole class: the Streamlit protocol client that warms replicas (and that the benchmarks' students
use), and the pieces serve.py needs that are worth testing on their own. Never imports streamlit's runtime."""
