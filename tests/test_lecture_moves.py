"""bench/lecture_moves.py --start-up walks every stop of every shipped lesson (issue 38 item 5: no first click of any
lesson over 2 s), each lesson from its stop 1 in order, as a teacher's Next does."""
import tomllib

from bench.lecture_moves import _lesson_walks
from tests.conftest import ROOT


def test_the_start_up_walk_covers_every_stop_of_every_lesson_file_in_order():
    walks = _lesson_walks(ROOT / "lessons")
    for path in (ROOT / "lessons").glob("*.toml"):
        lesson = tomllib.loads(path.read_text(encoding="utf-8"))
        stops = lesson["stop"]
        assert walks[lesson.get("id", path.stem)] == [
            f"{stop['page']}?lesson={lesson.get('id', path.stem)}&stop={number}"
            for number, stop in enumerate(stops, start=1)], path.name
    assert {"intro", "llm", "answer"} <= set(walks)
