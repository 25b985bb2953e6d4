"""The fixed sentences head importance and head-pattern labels are measured on: the same every time, so two runs
(and two servers) give the same tables."""
from __future__ import annotations

import functools

from model.data import make_dataset


def held_out_pairs(loaded, count: int = 300) -> list[tuple[list[str], list[str]]]:
    """The first `count` sentences of the model's test split: the held-out set training validates on (eval_size)."""
    train_config = loaded.meta.get("train_config", {})
    return [(list(src), list(tgt)) for src, tgt in
            _test_split(loaded.task, train_config.get("seed", 0), train_config.get("train_size"))[:count]]


@functools.lru_cache(maxsize=8)
def _test_split(task: str, seed: int, train_size: int | None) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """A dataset's test split, made once per process for every model trained on that dataset (the shipped en-fr
    translators share one: seconds each time, for their head labels and their importance alike)."""
    data = make_dataset(task, seed=seed, **({} if train_size is None else {"train_size": train_size}))
    return tuple((tuple(src), tuple(tgt)) for src, tgt in data.splits["test"])


# The fixed English set an encoder's head importance and head-pattern labels are measured on: the same every time,
# so two runs (and two servers) give the same table.
ENCODER_SENTENCES = (
    "The animal didn't cross the street because it was too tired.",
    "The keys to the old cabinet in the hall are on the table.",
    "A man is playing a guitar on the stage.",
    "Someone is playing an instrument in front of a crowd.",
    "The cat sat quietly on the warm windowsill.",
    "Stock markets fell sharply after the announcement.",
    "She forgot her umbrella, so she got wet on the way home.",
    "The children built a sandcastle near the water.",
    "Heavy rain caused flooding in several villages.",
    "The doctor told him to rest for a week.",
    "Our train was delayed by forty minutes this morning.",
    "He reads the newspaper every day before breakfast.",
    "The new library opens to the public next month.",
    "A small boat drifted slowly across the lake.",
    "The teacher explained the problem twice.",
    "Engineers are testing a faster version of the software.",
    "The museum was closed because of the strike.",
    "My brother lent me his bicycle for the weekend.",
    "The soup tastes better with a little salt.",
    "Birds were singing in the trees outside the window.",
    "The committee rejected the proposal without discussion.",
    "A dog is running through the snow.",
    "They moved to a quiet town near the coast.",
    "The printer on the second floor is out of paper.",
)


# The fixed English texts a causal language model's head importance (its next-token loss) and head-pattern labels
# are measured on: ordinary sentences and one passage said twice (the second time it can be copied from the
# context, the work of induction heads). About 250 SmolLM2 tokens in all: short enough for one batched pass.
LANGUAGE_MODEL_TEXTS = (
    "The animal didn't cross the street because it was too tired.",
    "She forgot her umbrella, so she got wet on the way home.",
    "Our train was delayed by forty minutes this morning, and the office was nearly empty when we arrived.",
    "The new library opens to the public next month. It has a reading room, a café and a garden on the roof.",
    "Birds were singing in the trees outside the window while the children finished their breakfast.",
    "To make the soup, cut the onions, cook them slowly in butter, then add the stock and a little salt.",
    "The committee rejected the proposal without discussion, and the mayor promised to bring it back in spring.",
    "Mr Dursley drove to the station, bought a paper and waited for the train to Glasgow. "
    "Mr Dursley drove to the station, bought a paper and waited for the train to Glasgow.",
)
