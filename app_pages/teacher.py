"""Teacher: start a live class (code and QR code), see the answers arrive, reveal the answer, move the class."""
import streamlit as st

from i18n import tr
from ui.lessons.teacher import teacher_page
from ui.display import page_title

page_title(tr("class_teacher.title"))
st.write(tr("class_teacher.intro"))
teacher_page()
