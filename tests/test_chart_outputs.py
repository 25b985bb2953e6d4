"""A chart's CSV and its words start from the data its builder attached (viz/chart_data.py), never from the figure:
for every chart the pages show (tests/chart_corpus.py) they are pinned in tests/data/chart_outputs.json, written when
viz/export.py and viz/summary.py still read them back from the figure and held equal to the data's then. A deliberate
change to what a chart exports or says is a change to that file (write_pinned), seen in its diff."""
import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from i18n import using_language
from tests.chart_corpus import chart_builders
from ui.language import words_for
from viz.chart_data import chart_data
from viz.export import chart_csv
from viz.summary import chart_summary

PINNED = Path(__file__).parent / "data" / "chart_outputs.json"
# Every chart in English; in Korean (the same code, other words and particles) one of each shape of words: a map, a
# grid, maps side by side, bars, lines, marks
KOREAN = ("heatmap_masked", "grid_masked_paged_labelled", "statistics_layer", "probability_bars", "training_curves",
          "lens_map", "dials")
# Charts whose builder computes sines and cosines itself (the dials' faces): their CSV's last digits may differ from
# one machine's maths library to another's, so their numbers are compared to a tolerance, their text exactly.
OWN_TRIGONOMETRY = {"dials"}


def data_outputs() -> dict[str, dict[str, str]]:
    """Every corpus chart's CSV and words in English (and KOREAN's in Korean), from its data; a title given to the
    words replaces the chart's own."""
    found = {}
    for language, names in (("en", None), ("ko", KOREAN)):
        with using_language(language):
            for name, build in chart_builders().items():
                if names is not None and name not in names:
                    continue
                data, words = chart_data(build()), words_for("display")
                found.setdefault(name, {})[f"csv_{language}"] = chart_csv(data).decode("utf-8")
                found[name][f"words_{language}"] = chart_summary(data, words=words)
                assert chart_summary(data, "Same head", words=words) == \
                    chart_summary(dataclasses.replace(data, title="Same head"), words=words), name
    return found


def write_pinned() -> None:
    """Write the corpus's CSV and words as they are now (after a deliberate change to what a chart exports or says)."""
    PINNED.write_text(json.dumps(data_outputs(), ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                      encoding="utf-8")


def _same_numbers(pinned: str, found: str) -> bool:
    a, b = (pd.read_csv(io.StringIO(text.lstrip("\ufeff"))) for text in (pinned, found))
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return False
    numbers = a.select_dtypes("number").columns
    return a.drop(columns=numbers).equals(b.drop(columns=numbers)) and \
        np.allclose(a[numbers].to_numpy(float), b[numbers].to_numpy(float), rtol=1e-12, atol=1e-12, equal_nan=True)


def test_every_charts_csv_and_words_are_the_pinned_ones():
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    found = data_outputs()
    assert sorted(found) == sorted(pinned)
    for name, outputs in pinned.items():
        for output, text in outputs.items():
            if name in OWN_TRIGONOMETRY and output.startswith("csv"):
                assert _same_numbers(text, found[name][output]), (name, output)
            else:
                assert found[name][output] == text, (name, output)
