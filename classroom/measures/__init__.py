"""The lecture's measures in one place, outside the UI: the registry (registry.py) and the modules that declare
its measures, one per kind of model they read. Importing this package registers every measure; `MEASURES` is then
the one list of their names (tests/test_measures.py keeps it so)."""
from __future__ import annotations

# each of these modules declares its measures
from classroom.measures import cell_maps, choices, finder, foundations, llm, llm_answer, translation  # noqa: F401
from classroom.measures.registry import (ANSWER_KINDS, MEASURES, STOP_MODEL, Asked, Expected, HeadValues, Measure,
                                         MeasureError, Phrase, Said, StopView, answer, answering, as_answer, as_figure,
                                         bounding, check_option_count, checked_args, figure, head_label, model_id,
                                         number_answer, take, view_names)
from classroom.measures.cells import CellMap, cell_answer, cell_of

__all__ = ["ANSWER_KINDS", "MEASURES", "STOP_MODEL", "Asked", "CellMap", "Expected", "HeadValues", "Measure", "MeasureError",
           "Phrase", "Said", "StopView", "answer", "answering", "as_answer", "as_figure", "bounding", "check_option_count",
           "cell_answer", "cell_of", "checked_args", "figure", "head_label", "model_id", "number_answer", "take", "view_names"]
