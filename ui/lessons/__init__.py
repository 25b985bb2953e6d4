"""The lessons' room: the lesson bar (bar.py), the lesson files it reads (catalogue.py), questions and claims
(questions.py, claims.py), the live class's store glue (classroom.py) and the teacher's page (teacher.py). What a
lesson keeps for this user (its position, answers, the flags its stop sets for the other rooms) is the session
object's (ui/session.py)."""
