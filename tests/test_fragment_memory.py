"""What an open session holds outside the result store (issue 36, item 1): nothing the size of an analysis.

Streamlit keeps every fragment of a session's last run, with the arguments it was called with, for the fragment's own
reruns (runtime.fragment.MemoryFragmentStorage, per AppSession). The attention explorer was handed the analysis: a
512-token SmolLM2 text's 270 MiB of maps stayed with each open session after the store let them go (ten students:
1,015 → 3,878 MiB, bench/adversary_memory.py). It is now handed the model id and the sentence and reads the analysis
from the store (ui.state.analysis_of), and the analysis worker lets go of its last job."""
import sys
import time
import types

import numpy as np

from model.sources import AnalysedInput
from tests.app_links import chart_titles, open_page
from runtime.fair_queue import DONE, FairQueue
from runtime.result_cache import RESULTS, nbytes

SENTENCE = "the cat sat on the mat"


def _reachable(value, seen: set[int]) -> list:
    """Every object reachable from value through closures, containers, dataclasses and instance dicts."""
    if id(value) in seen or isinstance(value, (str, bytes, int, float, bool, type(None), type, types.ModuleType)):
        return []
    seen.add(id(value))
    found = [value]
    children = []
    if isinstance(value, types.FunctionType):
        children = [cell.cell_contents for cell in value.__closure__ or () if cell.cell_contents is not None]
        children += list(value.__defaults__ or ())
    elif isinstance(value, types.MethodType):
        children = [value.__self__, value.__func__]
    elif isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        children = list(value)
    elif hasattr(value, "__dict__"):
        children = list(vars(value).values())
    for child in children:
        found += _reachable(child, seen)
    return found


def test_the_attention_explorer_fragment_keeps_no_analysis_in_the_session():
    at = open_page("attention", sentence=SENTENCE)
    fragments = list(at._fragment_storage._fragments.values())
    assert fragments, "the attention explorer is a fragment"
    held = [obj for fragment in fragments for obj in _reachable(fragment, set())]
    assert not [obj for obj in held if isinstance(obj, (AnalysedInput, np.ndarray))]
    assert nbytes(fragments) < 64 * 1024


def test_the_explorer_draws_again_once_the_store_let_the_analysis_go():
    at = open_page("attention", sentence=SENTENCE)
    drawn = chart_titles(at)
    RESULTS.clear()  # as a class's other texts would have evicted it
    at.run()
    assert not at.exception and not at.error
    assert drawn and chart_titles(at) == drawn  # the analysis read again, by its model id and sentence


def test_the_analysis_worker_lets_go_of_a_finished_jobs_result():
    queue = FairQueue("test-memory", workers=1)
    result = np.ones(1000)
    job = queue.submit("a", "key", lambda: result)
    assert job.done.wait(10) and job.state == DONE and job.result is result
    # the test's names (result, job) and the getrefcount argument: the worker thread no longer holds it
    del job
    for _ in range(100):
        if sys.getrefcount(result) <= 2:
            break
        time.sleep(0.01)
    assert sys.getrefcount(result) == 2
