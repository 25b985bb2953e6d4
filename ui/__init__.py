"""Streamlit glue, in rooms on floors (tests/test_layers.py): the run's order (run.py) on top; the lesson bar
(lesson_bar/) over the live class (live_class/) and the LLM heads page (llm_heads/); under them the guided lesson
(lessons/), the attention explorer (attention/), the LLM page (llm/) and the train page (train/); the shared machinery
at the bottom, here (session, state, loaders, language, presenter mode, screen widths, charts, sidebar, links, the
views and their widget specs in specs/)."""
