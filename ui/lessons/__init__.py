"""The guided lesson's room: the lesson bar (bar.py), opening a stop (stops.py), the lesson files it reads
(catalogue.py), questions, claims and measures (questions.py, claims.py, measured.py). The live class is a room of its
own (ui/live_class/), which the bar draws during a class. What a lesson keeps for this user (its position, answers, the
flags its stop sets for the other rooms) is the session object's (ui/session.py)."""
