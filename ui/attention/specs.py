"""Specs of the Transformer attention page (ui/attention/view.py, ui/attention/explain.py): which map, which head,
which view, and each view's own choices. Layer and head bounds are the sidebar's model's."""
from __future__ import annotations

from ui.attention.ids import KINDS, VIEWS, rescale_options
from ui.attention.explain import SPECS as EXPLAIN_SPECS
from ui.attention.switches import HIDE_SPECIAL_SPEC, MERGE_WORDS_SPEC
from ui.session import WidgetKey
from ui.state import get_model, selected_attention_layout, selected_model_id
from ui.widget_spec import WidgetSpec, boolean

PAGE = ("attention",)


def _kinds(state) -> list[str]:
    """The kinds the sidebar's model has (an encoder: its self-attention only)."""
    return list(selected_attention_layout(state))


def _first_kind(state) -> str:
    return next(iter(selected_attention_layout(state)), next(iter(KINDS)))


def _last_of(kind_spec: WidgetSpec, axis: int):
    """The last layer (axis 0) or head (axis 1) of the kind `kind_spec` has chosen: an encoder-decoder's stacks may
    differ."""
    def last(state) -> int:
        layout = selected_attention_layout(state)
        # a kind this model lacks is refitted to its first kind when drawn: bound the layer and head by that one
        shape = layout.get(kind_spec.current(state)) or next(iter(layout.values()), (1, 1))
        return shape[axis] - 1
    return last


def _rescale_options(state) -> list[float]:
    return rescale_options(get_model(selected_model_id(state)).head_dim)


KIND = WidgetSpec("attn_kind", "kind", _first_kind, PAGE, options=_kinds)
LAYER = WidgetSpec("attn_layer", "layer", 0, PAGE, low=0, high=_last_of(KIND, 0), convert=int, counted=True)
HEAD = WidgetSpec("attn_head", "head", 0, PAGE, low=0, high=_last_of(KIND, 1), convert=int, counted=True)
# the views a model cannot show (Ablation, Rescale: capabilities of its analysis) are left out where it is drawn
VIEW = WidgetSpec("attn_view", "view", VIEWS[0], PAGE, options=VIEWS)
# the Compare view's B: it starts on A's kind (the difference map is there at once) and on A's layer, head 2
COMPARE_KIND = WidgetSpec("cmp_kind", "cmp_kind", lambda state: KIND.fitted(KIND.current(state), state), PAGE,
                          options=_kinds)
COMPARE_LAYER = WidgetSpec("cmp_layer", "cmp_layer", 0, PAGE, low=0, high=_last_of(COMPARE_KIND, 0), convert=int,
                           counted=True)
COMPARE_HEAD = WidgetSpec("cmp_head", "cmp_head", lambda state: min(1, _last_of(COMPARE_KIND, 1)(state)), PAGE,
                          low=0, high=_last_of(COMPARE_KIND, 1), convert=int, counted=True)
RESCALE_FACTOR = WidgetSpec("rescale_factor", "rescale", 1.0, PAGE, options=_rescale_options, convert=float)
# the encoder's token switches (HIDE_SPECIAL_SPEC, MERGE_WORDS_SPEC) are declared in ui/attention/switches.py
# the Explain view's are declared beside its widgets in ui/attention/explain.py
SPECS = (KIND, LAYER, HEAD, VIEW, COMPARE_KIND, COMPARE_LAYER, COMPARE_HEAD, RESCALE_FACTOR, HIDE_SPECIAL_SPEC,
         MERGE_WORDS_SPEC, *EXPLAIN_SPECS)


def _heads_from_text(text: str) -> list[tuple[str, int, int]]:
    """Link text -> switched-off heads: "cross.2.3,encoder_self.1.1" (layer and head from 1, as on screen)."""
    heads = []
    for item in filter(None, text.split(",")):
        kind, layer, head = item.split(".")  # ValueError unless three parts
        if not (layer.isascii() and layer.isdigit() and head.isascii() and head.isdigit()):
            raise ValueError(f"{item!r} is not kind.layer.head")
        heads.append((kind, int(layer) - 1, int(head) - 1))
    return heads


def _heads_text(heads) -> str:
    return ",".join(f"{kind}.{layer + 1}.{head + 1}" for kind, layer, head in heads)


class _HeadLists:
    """The options of the switched-off heads: any list of distinct heads the current model has (`in` checks)."""

    def __init__(self, layout: dict[str, tuple[int, int]]):
        self.layout = layout

    def __contains__(self, value: object) -> bool:
        heads = [tuple(item) for item in value] if isinstance(value, list | tuple) else None
        return heads is not None and len(set(heads)) == len(heads) and all(
            len(h) == 3 and h[0] in self.layout and isinstance(h[1], int) and isinstance(h[2], int)
            and 0 <= h[1] < self.layout[h[0]][0] and 0 <= h[2] < self.layout[h[0]][1] for h in heads)

    def __iter__(self):
        return iter(())  # not a list of choices: the Ablation view's multiselect lists the heads


# The Ablation view's switched-off heads (the translation models' and the encoder's: the same key)
ABLATED_HEADS = WidgetSpec("ablate_heads", "heads_off", lambda state: [], PAGE,
                           options=lambda state: _HeadLists(selected_attention_layout(state)),
                           convert=_heads_from_text, text=_heads_text)
SPECS = (*SPECS, ABLATED_HEADS)

STATS_AVERAGE = WidgetKey("stats_average")  # the Statistics view's switch: one row per layer (kept, not in links)
KEPT_ONLY = {STATS_AVERAGE.key: lambda value, state: boolean(str(value))}
