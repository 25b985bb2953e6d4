"""Specs of the Teacher page (app_pages/teacher.py): whether this screen is the teacher's private view."""
from __future__ import annotations

from ui.widget_spec import WidgetSpec, boolean

PAGE = ("teacher",)
# /teacher?private=true: her phone or a second window, never the projected page (ui/live_class/private_view.py)
PRIVATE = WidgetSpec("teacher_private", "private", False, PAGE, options=(False, True), convert=boolean)
SPECS = (PRIVATE,)
