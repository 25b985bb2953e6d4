"""The session flags an open lesson stop sets on every run (ui/lessons/bar.py) for the other rooms to read: a page's
title and its explanations give way to the bar and to the section the stop is about (ui/display.py,
ui/page_sections.py). Streamlit-free: names only."""

TITLED_BY_LESSON = "_titled_by_lesson"  # True while the lesson bar names the view shown (the page's title is left out)
STOP_SECTION = "_lesson_stop_section"  # the section of the page the open stop shows first, or None
STOP_ASKS = "_lesson_stop_asks"  # True while the open stop, on its page, asks its own question: the page leaves out
# any predict-and-reveal question of its own (one question per stop; the lesson's is the one the class answers)
