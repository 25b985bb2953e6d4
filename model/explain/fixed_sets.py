"""The fixed sentences head importance and head-pattern labels are measured on: the same every time, so two runs
(and two servers) give the same tables."""
from __future__ import annotations

from model.data import make_dataset


def held_out_pairs(loaded, count: int = 300) -> list[tuple[list[str], list[str]]]:
    """The first `count` sentences of the model's test split: the held-out set training validates on (eval_size)."""
    train_config = loaded.meta.get("train_config", {})
    data = make_dataset(loaded.task, seed=train_config.get("seed", 0),
                        **({"train_size": train_config["train_size"]} if "train_size" in train_config else {}))
    return data.splits["test"][:count]


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
