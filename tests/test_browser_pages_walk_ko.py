"""Every page in Korean, projected: the walk of tests/test_browser_pages_walk.py for ("ko", True), in a file of its
own so that neither file passes the 4 minutes a file may take on a slow day of these 2 cores (issue 52). The checks
at each page are that module's (its docstring)."""
import pytest
from playwright.sync_api import Page

from tests.test_browser_pages_walk import WALK_IDS, WALKS, walk_every_page

HERE = [walk for walk in WALKS if walk not in (("en", False), ("en", True))]


@pytest.mark.slow
@pytest.mark.parametrize(("language", "presenter"), HERE, ids=[WALK_IDS[walk] for walk in HERE])
def test_every_page_is_accessible_and_its_charts_text_fits(page: Page, app_url, language, presenter):
    walk_every_page(page, app_url, language, presenter)
