"""The hostile inputs every text field must survive (tests/bad_inputs.txt), each line read as Python string-literal
text. The project keeps its own copy so that a plain clone runs its tests; add new cases to that file."""
from pathlib import Path

BAD_INPUTS_FILE = Path(__file__).resolve().parent / "bad_inputs.txt"


def load_bad_inputs() -> list[str]:
    lines = BAD_INPUTS_FILE.read_text(encoding="utf-8").splitlines()
    # backslashreplace keeps non-Latin text intact through unicode_escape, which then decodes \n, \x00, \u200d...
    return [line.encode("latin-1", "backslashreplace").decode("unicode_escape")
            for line in lines if not line.startswith("#")]
