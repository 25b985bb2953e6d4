"""The train page's room: its form, curves and uploads (view.py), the background training job, which does not use
Streamlit (job.py), and who may upload a model (upload_policy.py)."""
