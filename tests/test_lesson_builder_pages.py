"""A teacher's own lessons in AppTest (issue 57, part 1): she signs in on the Teacher page, adds three views as stops
from three pages (one with a measured question), reorders them, previews one as students see it and saves; the lesson
opens from Home in another session. A student gets no builder, and the store refuses a save her session forges; a bad
stop is refused on screen with its stop and field, and the draft keeps every stop."""
import pytest

from classroom.lesson_draft import Draft, fixed_question, view_stop
from classroom.saved_lessons import LessonAuthor
from classroom.store import DATABASE_URL_ENV
from classroom.teacher_password import PASSWORD_ENV
from i18n import translate
from tests.app_links import assert_healthy, go_to, lab_session_of, open_page
from ui.lessons.catalogue import known_pages, saved_changed, shelf
from ui.session import LabSession

PASSWORD = "builder-test"


@pytest.fixture(autouse=True)
def data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_DATA", str(tmp_path))
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)


def _texts(at) -> str:
    """The page's texts as read on screen (escape_markdown's backslashes and joiners dropped)."""
    return " ".join(str(e.value) for kind in ("markdown", "caption", "success", "error", "info", "warning")
                    for e in at.get(kind)).replace("\\", "").replace("\u034f", "")


def _add(at, page: str, title: str, section: str | None, kind: str = "none", **fields) -> None:
    """Fill the sidebar's 'Add this view as a stop' and press Add stop."""
    at.text_input(key="builder_stop_title_en").input(title)
    at.text_area(key="builder_stop_text_en").input(f"About {title}.")
    at.selectbox(key=f"builder_stop_section_{page}_en").set_value(section)
    at.selectbox(key="builder_stop_kind_en").set_value(kind).run()
    for key, value in fields.items():
        widget = next(w for kind_ in ("text_input", "text_area", "selectbox", "number_input") for w in at.get(kind_)
                      if w.key == key)
        widget.set_value(value)
    at.button(key="builder_add_stop").click().run()
    assert_healthy(at)


def test_a_teacher_builds_a_three_stop_lesson_from_views_saves_it_and_it_opens_from_home():
    teacher = open_page("teacher")
    assert not [b for b in teacher.button if b.key == "builder_save"]  # signed out: only the sign-in form
    teacher.text_input(key="builder_password").input(PASSWORD)
    next(b for b in teacher.form_submit_button if b.label == "Sign in to build lessons").click().run()
    assert "No stops yet" in _texts(teacher)

    go_to(teacher, "positional")
    _add(teacher, "positional", "Waves", "curves", "choice", builder_stop_prompt_en="Which is faster?",
         builder_stop_options_en="the first dimension")  # one option only: refused, naming the stop and field
    assert "Not saved. Stop 1, question: a choice question needs options" in _texts(teacher)
    assert teacher.text_input(key="builder_stop_title_en").value == "Waves"  # nothing she typed is lost
    teacher.text_area(key="builder_stop_options_en").input("the first dimension\nthe last dimension")
    teacher.number_input(key="builder_stop_answer").set_value(1)
    teacher.button(key="builder_add_stop").click().run()
    assert "Added as stop 1" in _texts(teacher)

    go_to(teacher, "attention_steps")
    teacher.selectbox(key="steps_mask").set_value("causal").run()
    _add(teacher, "attention_steps", "Causal mask", "steps", "measured",
         builder_stop_measure_attention_steps_en="causal_visible_keys")
    teacher.text_input(key="builder_stop_prompt_en").input("How many keys may query 3 see?")
    teacher.text_input(key="builder_stop_arg_causal_visible_keys_query").input("3")
    teacher.button(key="builder_add_stop").click().run()
    assert "Added as stop 2" in _texts(teacher)

    go_to(teacher, "softmax_scaling")
    _add(teacher, "softmax_scaling", "Saturation", "saturation")
    assert "Added as stop 3" in _texts(teacher)
    draft = lab_session_of(teacher).builder.draft
    measured = draft.stops[1]
    assert measured["state"]["mask"] == "causal" and measured["question"] == {
        "kind": "number", "prompt": {"en": "How many keys may query 3 see?"}, "compute": "causal_visible_keys",
        "args": {"query": 3}}

    go_to(teacher, "teacher")
    teacher.button(key="builder_up_2").click().run()  # Saturation before the causal mask
    assert [s["title"]["en"] for s in lab_session_of(teacher).builder.draft.stops] == ["Waves", "Saturation",
                                                                                      "Causal mask"]
    teacher.text_input(key="builder_title_en").input("My three views").run()
    teacher.button(key="builder_save").click().run()
    assert_healthy(teacher)
    assert "Saved “my-three-views”, version 1" in _texts(teacher)
    assert shelf().lesson("my-three-views").version == 1

    teacher.button(key="builder_preview_2").click().run()  # the measured stop, as a student opens it
    go_to(teacher, "attention_steps")  # AppTest's next run stays on the page the switch left: follow it
    assert "stop 3 of 3" in teacher.markdown[0].value
    asked = next(n for n in teacher.number_input if n.label == "How many keys may query 3 see?")
    asked.set_value(3)
    next(b for b in teacher.form_submit_button if b.form_id == "q_draft-preview_3_form").click().run()
    assert "Right: 3" in _texts(teacher)  # measured at the stop's view: the causal mask lets query 3 see 3 keys

    student = open_page("home")
    button = next(b for b in student.button if b.key == "open_lesson_my-three-views")
    assert button.label == "A teacher's lesson: My three views"
    button.click().run()
    assert_healthy(student)
    assert "stop 1 of 3: **Waves**" in student.markdown[0].value
    assert [r.options for r in student.radio if r.label == "Which is faster?"] == [["the first dimension",
                                                                                   "the last dimension"]]
    assert not [p for p in student.get("popover") if "Add this view" in str(p.label)]  # no builder for her


def test_a_student_cannot_save_even_with_a_forged_key():
    student = open_page("softmax_scaling")
    assert not [p for p in student.get("popover") if "Add this view" in str(p.label)]
    lab = LabSession()
    lab.builder.author = LessonAuthor("forged")  # the page is fooled; the store is not
    lab.builder.draft = Draft({"en": "Mine"}, [view_stop("positional", {}, None, {"en": "P"}, {"en": "x"})])
    forged = open_page("teacher", lab=lab)
    forged.button(key="builder_save").click().run()
    assert "Only a signed-in teacher can save lessons" in _texts(forged)
    assert shelf().versions() == {} and len(lab_session_of(forged).builder.draft.stops) == 1


def test_a_bad_stop_is_refused_on_screen_with_stop_and_field_and_the_draft_is_kept():
    lab = LabSession()
    lab.builder.author = shelf().sign_in(PASSWORD)
    good = view_stop("softmax_scaling", {"dk": "64"}, "saturation", {"en": "Saturation"}, {"en": "Scale."},
                     fixed_question("number", {"en": "How many?"}, answer=2.0))
    bad = view_stop("positional", {}, "nowhere", {"en": "Lost"}, {"en": "x"})
    lab.builder.draft = Draft({"en": "Two stops"}, [good, bad])
    teacher = open_page("teacher", lab=lab)
    teacher.button(key="builder_save").click().run()
    assert "Not saved. Stop 2, section: unknown section 'nowhere' of page 'positional'" in _texts(teacher)
    assert shelf().versions() == {} and len(lab_session_of(teacher).builder.draft.stops) == 2


def test_a_class_started_on_a_saved_lesson_keeps_its_version_when_she_saves_again():
    lab = LabSession()
    lab.builder.author = shelf().sign_in(PASSWORD)
    stops = [view_stop(page, {}, None, {"en": page}, {"en": "x"}) for page in ("positional", "residual", "compare")]
    lab.builder.draft = Draft({"en": "Versions"}, stops)
    teacher = open_page("teacher", lab=lab)
    teacher.button(key="builder_save").click().run()
    teacher.text_input(key="class_start_password").input(PASSWORD)
    next(s for s in teacher.selectbox if s.label == "Lesson").set_value("versions")
    next(b for b in teacher.form_submit_button if b.label == "Start a class").click().run()
    assert_healthy(teacher)
    assert "stop 1 of 3" in teacher.subheader[0].value
    teacher.button(key="builder_remove_2").click().run()
    teacher.button(key="builder_save").click().run()
    assert "Saved “versions”, version 2" in _texts(teacher)
    teacher.run()
    assert "stop 1 of 3" in teacher.subheader[0].value  # the running class keeps version 1
    teacher.button(key="class_end").click().run()
    assert len(lab_session_of(teacher).teacher.ended_lesson.stops) == 3  # and so does its report
    reader = open_page("home")
    next(b for b in reader.button if b.key == "open_lesson_versions").click().run()
    assert "stop 1 of 2" in reader.markdown[0].value  # a new reader opens version 2

    teacher.selectbox(key="builder_start_from").set_value("versions").run()  # then she deletes it: gone for all
    teacher.button(key="builder_delete").click().run()
    assert_healthy(teacher)
    assert "Deleted “versions”" in _texts(teacher) and shelf().lesson("versions") is None
    assert not [b for b in open_page("home").button if b.key == "open_lesson_versions"]


def test_every_bad_input_in_the_builders_fields_is_added_as_text_or_refused_with_a_message():
    """../shared/bad_inputs.txt in the stop's title, text and question prompt and the lesson's title: each stop is
    added (its text kept as typed, shown escaped) or refused with its stop and field named; nothing breaks the page,
    and the lesson saves or is refused the same way."""
    from tests.bad_inputs import load_bad_inputs

    teacher = open_page("teacher")
    teacher.text_input(key="builder_password").input(PASSWORD)
    next(b for b in teacher.form_submit_button if b.label == "Sign in to build lessons").click().run()
    go_to(teacher, "softmax_scaling")
    added = 0
    for text in load_bad_inputs():
        teacher.text_input(key="builder_stop_title_en").input(text)
        teacher.text_area(key="builder_stop_text_en").input(text)
        teacher.selectbox(key="builder_stop_section_softmax_scaling_en").set_value("saturation")
        teacher.selectbox(key="builder_stop_kind_en").set_value("text").run()
        teacher.text_input(key="builder_stop_prompt_en").input(text)
        teacher.button(key="builder_add_stop").click().run()
        assert_healthy(teacher)
        said = _texts(teacher)
        assert "Added as stop" in said or "Not saved. Stop" in said, (text[:40], said[:200])
        added += "Added as stop" in said
    draft = lab_session_of(teacher).builder.draft
    assert added == len(draft.stops) and added >= 1
    go_to(teacher, "teacher")
    teacher.text_input(key="builder_title_en").input(load_bad_inputs()[-1] or "x")
    teacher.button(key="builder_save").click().run()
    assert_healthy(teacher)


def test_a_page_outside_the_class_holds_back_what_the_classs_own_version_asks_not_the_newest():
    """A class runs on version 1 of a saved lesson (its stop 1 asks about the positional page) while its teacher saves
    a version 2 without that stop: a student opening the positional page outside the class still finds it held until
    the Reveal (issue 42), as the class's own version asks, not the newest."""
    store = shelf()
    author = store.sign_in(PASSWORD)
    asked = fixed_question("choice", {"en": "Which is faster?"}, options={"en": ["first", "last"]}, answer=1)
    first = Draft({"en": "Moving"}, [view_stop("positional", {}, None, {"en": "Waves"}, {"en": "x"}, asked),
                                     view_stop("residual", {}, None, {"en": "Skip"}, {"en": "x"})]).source()
    saved = store.save(author, first, known_pages())
    saved_changed()
    store.store.create_class(saved.id, lesson_source=first)
    reader = open_page("positional")
    held = translate("en", "lessons.page_held", stop=1)
    assert held in [str(m.value) for m in reader.info]
    second = Draft({"en": "Moving"}, [view_stop("residual", {}, None, {"en": "Skip"}, {"en": "x"})]).source()
    assert store.save(author, second, known_pages(), lesson_id=saved.id).version == 2
    saved_changed()
    reader = open_page("positional")
    assert held in [str(m.value) for m in reader.info]
