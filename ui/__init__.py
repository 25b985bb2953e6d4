"""Streamlit glue, in rooms: the shared machinery here (state, loaders, display, sidebar, links, widget specs),
the attention explorer in attention/, the lessons and the live class in lessons/, the train page in train/."""
