"""The lesson bar's room: the bar on every page while a lesson is open and the lesson picker (bar.py), and opening a
stop (stops.py). It joins the guided lesson (ui/lessons/: its files, questions, claims and measures) to the live class
(ui/live_class/: a student's class question, the class watch, the teacher's move), so it stands above both rooms,
which know nothing of it."""
