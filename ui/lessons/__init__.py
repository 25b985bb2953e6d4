"""The lessons' room: the lesson bar (bar.py), the lesson files it reads (catalogue.py), questions and claims
(questions.py, claims.py), the live class's store glue (classroom.py), the teacher's page (teacher.py) and the
session flags a lesson sets for the other rooms (flags.py)."""
