"""The README's two commands (`make run`, `make test`): the clone's own .venv from the hashed lock, reused while the
lock is unchanged, and CI running exactly the test command."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_readme_opens_with_the_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```\n(.*?)```", readme, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make run", "make test"]
    assert readme.index("```") < readme.index("## Pages")  # the first code block, before anything else
    ci = (ROOT / ".ci" / "run").read_text()
    assert [line for line in ci.splitlines() if line.startswith("make ")] == ["make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: venv\n", makefile, re.M) and re.search(r"^test: venv system-packages", makefile, re.M)
    venv_script = (ROOT / "scripts" / "venv.sh").read_text()
    assert "--require-hashes -r requirements.lock" in venv_script
    assert "--no-deps --require-hashes -r requirements-nodeps.lock" in venv_script



def test_every_way_to_start_the_lab_serves_the_same_entry():
    """`make run`, the by-hand block (docs/development.md) and serve.py's replicas all run asgi.py: `streamlit run
    app.py` has no seat cookie, so a reload there would make a new student and the teacher would lose her class."""
    readme = (ROOT / "README.md").read_text() + (ROOT / "docs" / "development.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    by_hand = re.search(r"Without `make`.*?```\n(.*?)```", readme, re.S).group(1)
    entries = re.findall(r"streamlit run (\S+)", by_hand + makefile)
    assert entries and set(entries) == {"asgi.py"}
    for launcher in ("serve.py", "serving/replica.py"):
        assert '"streamlit", "run", "asgi.py"' in (ROOT / launcher).read_text()
    assert not re.search(r"streamlit run app\.py`? (--|reloads|is one|still serves)", readme)

@pytest.mark.slow
def test_venv_is_made_once_and_remade_when_the_lock_changes(tmp_path):
    """scripts/venv.sh in a copy of the clone with a lock that pins nothing (no network): the first call makes .venv
    and its stamp, the second installs nothing, a changed lock makes it anew; the venv never sees site-packages."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "venv.sh", tmp_path / "scripts" / "venv.sh")
    lock = tmp_path / "requirements.lock"
    lock.write_text("# nothing pinned\n")
    (tmp_path / "requirements-nodeps.lock").write_text("# nothing pinned without its dependencies\n")
    env = {**os.environ, "PYTHON": sys.executable}

    def make_venv() -> str:
        done = subprocess.run(["bash", str(tmp_path / "scripts" / "venv.sh")], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "Making .venv" in make_venv()
    python = tmp_path / ".venv" / "bin" / "python"
    stamp = tmp_path / ".venv" / "requirements.lock.sha256"
    both_locks = lock.read_bytes() + (tmp_path / "requirements-nodeps.lock").read_bytes()
    assert python.exists() and stamp.read_text().strip() == hashlib.sha256(both_locks).hexdigest()
    assert "include-system-site-packages = false" in (tmp_path / ".venv" / "pyvenv.cfg").read_text()
    made = python.lstat().st_mtime_ns
    assert make_venv() == ""  # nothing said, nothing installed
    assert python.lstat().st_mtime_ns == made
    lock.write_text("# nothing pinned, but a new lock\n")
    assert "Making .venv" in make_venv()
    stamp.write_text("interrupted\n")  # an install that never finished is redone
    assert "Making .venv" in make_venv()
