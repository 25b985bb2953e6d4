"""The runtime under the pages, in one process: what every session of a replica shares, without Streamlit.

result_cache.py (the byte-bounded store of computed results), fair_queue.py (long jobs served in turns, one per
session), analysis_worker.py (the heavy analyses' worker, their progress and sizes), training_jobs.py (the trainings
in the background) and page_slots.py (how many page bodies draw at once, the teacher's run first). Nothing here
imports Streamlit: ui/ hands in what only a script run knows (whose turn a job takes, whether a session is alive) and
draws the waiting; serving/ reads the result store for the metrics."""
