"""The projected walk of tests/test_browser_projected_stops.py (every stop projected in English and Korean, every check
at each stop) over the shipped lessons other than the intro and the choices lesson (their own files): the LLM lessons.
A file of its own so that no test file takes more than 4 minutes, one worker's share of the run (issue 52); a new
lesson file is walked here."""
import pytest
from playwright.sync_api import Page

from tests.test_browser_projected_stops import HERE, LESSONS, walk_projected_lesson
from tests.test_browser_projected_stops_choices import HERE as CHOICES


@pytest.mark.parametrize("lesson_id", sorted(set(LESSONS) - set(HERE) - set(CHOICES)))
@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_projected_stop_opens_on_its_point_in_text_a_room_can_read(page: Page, app_url, language, lesson_id):
    walk_projected_lesson(page, app_url, language, lesson_id)
