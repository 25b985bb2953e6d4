"""No module of the app's layers is over 400 lines (issue 39): a file that grows past it is split by topic, as
classroom/store.py (teacher.py, errors.py, records.py, database.py, migrations.py) and model/families.py
(model/adapters/) were."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("model", "ui", "runtime", "classroom", "serving", "viz")
LIMIT = 400


def test_no_module_of_the_layers_is_over_400_lines():
    long = {str(path.relative_to(ROOT)): lines for layer in LAYERS for path in sorted((ROOT / layer).rglob("*.py"))
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > LIMIT}
    assert not long, f"over {LIMIT} lines: {long}"
