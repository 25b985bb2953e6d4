"""Teacher: start a live class (code and QR code), see the answers arrive, reveal the answer, move the class."""
import streamlit as st

from i18n import tr
from ui.lesson_builder.builder import lesson_builder
from ui.live_class.teacher import teacher_page
from ui.presenter import explanation, page_title

page_title(tr("class_teacher.title"))
with explanation(tr("projected_lesson.about_page")):  # presenter mode: folded, the answers' chart higher up
    st.write(tr("class_teacher.intro"))
teacher_page()
lesson_builder()  # her own lessons: the stops she added from the views, saved for the class (issue 57)
