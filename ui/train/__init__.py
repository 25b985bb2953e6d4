"""The train page's room: its form, curves and uploads (view.py) and who may upload a model (upload_policy.py); the
trainings themselves run in runtime/training_jobs.py, without Streamlit."""
