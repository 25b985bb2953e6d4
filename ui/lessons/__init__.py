"""The guided lesson's room: the lesson files (catalogue.py), a stop's questions, claims and measures (questions.py,
claims.py, measured.py). The live class (ui/live_class/) asks it for a lesson's questions and measures, and the lesson
bar (ui/lesson_bar/) draws a stop with it; it imports neither. What a lesson keeps for this user (its position,
answers, the flags its stop sets for the other rooms) is the session object's (ui/session.py)."""
