"""The live class's room: the Teacher page (teacher.py), peer instruction's two sides (peer_teacher.py,
peer_student.py), a student's class question (live_question.py), the class watch, the countdown, the seats, the class
report, the teacher's private view, the answers held back before their Reveal, and the class store's refusals as
messages. Its store is classroom/ (ui/seat.py opens it); the guided lesson it runs is ui/lessons/'s, which it asks
for questions and measures; the lesson bar (ui/lesson_bar/) draws a student's side of it on every page."""
