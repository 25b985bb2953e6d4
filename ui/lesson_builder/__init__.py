"""A teacher's own lessons (issue 57): 'Add this view as a stop' on any page (add_stop.py), the builder on the Teacher
page (builder.py: her draft's stops, reorder, remove, preview, save, download), and their words (words.py). The draft
lives in her session (ui/session.BuilderState); a saved lesson lives in the class store (classroom/saved_lessons.py)."""
