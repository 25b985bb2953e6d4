"""Pages and views ask a model's capabilities, never its family (model/adapters/ is the one place that does).

Outside the adapters, no module of ui/, runtime/, app_pages/ or viz/ may branch on a model class or a family name: an
isinstance() with a class defined in model/, a comparison with a family name (or with a `.family`), or a call of
the helpers the adapters replaced. Nor on a proxy for the family: whether an analysis's optional part is set
(`analysed.special is not None` meant "an encoder"), which kinds a decode's `.attention` holds (`"cross" in
result.attention`), whether anything holds a kind of attention by its name (`"cross" in lab.layout` or `"cross" in
maps` meant "our encoder-decoder translator", `"alignment" in ...` "the GRU with attention"), or whether a model has no
heads at all (`not lab.layout` meant "a GRU seq2seq": `can(ALIGNMENT)` says it has one alignment). A view asks
`can(...)`, or looks a kind up in what the capability it asked guarantees (`analysed.maps["cross"]`) or goes through
the model's `layout`; nor reach past the adapter into its `network` (`lab.network.src_vocab`): what a view needs of
it is a typed part (`lab.vocabulary`) or a protocol method (`word_vectors`). A new family is then one adapter, and no
page needs to learn its name."""
import ast
from functools import cache
from pathlib import Path

import pytest

from model.adapters import FAMILY_NAMES
from model.explain.kinds import ATTENTION_KINDS

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("ui", "runtime", "app_pages", "viz")
# What the adapters replaced: each was a question about the family (is_toy: "is it a LoadedModel?").
OLD_HELPERS = {"is_toy", "is_encoder_only", "family_of", "analyse_toy", "analyse_encoder", "analyse_model",
               "analyse_encoder_input", "analyse_foreign_input", "analyse_ablated", "runs_in_our_encoder",
               "is_encoder_decoder", "is_decoder_only", "model_type"}
# The typed parts of model.sources.AnalysedInput (and the fields they replaced) that only some families have: a view
# asks the capability that goes with each, not whether it is None.
OPTIONAL_PARTS = {"translation", "encoding", "next_token", "decode", "output_tokens", "special", "word_ids",
                  "final_vectors", "embedding"}
# The kinds of attention: whether a model or an analysis holds one (`"cross" in lab.layout`) tells its family apart
# (the encoder-decoder from the decoder-only, the GRU from the Transformer): a view asks the capability instead.
KIND_NAMES = frozenset(ATTENTION_KINDS) | {"alignment"}


@cache
def model_classes() -> frozenset[str]:
    """Every class defined in model/ but its exceptions (an `except`-like isinstance on an error is no branch) and its
    protocols (isinstance with model.adapters' Generates, ScoresHeads, ... asks a capability, not a family)."""
    names = set()
    for path in (ROOT / "model").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            protocol = isinstance(node, ast.ClassDef) and "Protocol" in _names(ast.Tuple(node.bases))
            if isinstance(node, ast.ClassDef) and not node.name.endswith("Error") and not protocol:
                names.add(node.name)
    return frozenset(names)


def _names(node: ast.AST) -> set[str]:
    """The plain and dotted names in an isinstance()'s second argument (a name, model.x.Name, or a tuple)."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)}


def _is_family(node: ast.AST) -> bool:
    """A family name (or a tuple/list/set of them, or one's "transformers:" prefix) or an x.family attribute."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in FAMILY_NAMES or (":" in node.value and node.value.split(":")[0] in FAMILY_NAMES)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_family(element) for element in node.elts)
    return isinstance(node, ast.Attribute) and node.attr == "family"


def _is_proxy(node: ast.Compare) -> bool:
    """`x.<optional part> is (not) None`, `... in x.attention`, or a kind's name `in` anything (`"cross" in maps`)."""
    sides = [node.left, *node.comparators]
    if any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
        none = any(isinstance(side, ast.Constant) and side.value is None for side in sides)
        return none and any(isinstance(side, ast.Attribute) and side.attr in OPTIONAL_PARTS for side in sides)
    if any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
        return any(isinstance(side, ast.Attribute) and side.attr == "attention" for side in node.comparators) or \
            (isinstance(node.left, ast.Constant) and node.left.value in KIND_NAMES)
    return False


def family_branches(source: str, classes: frozenset[str]) -> list[tuple[int, str]]:
    """(line, what) of every branch on a model's class or family in a module's source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance",
                                                                                              "issubclass"):
            hit = _names(node.args[1]) & classes if len(node.args) == 2 else set()
            if hit:
                found.append((node.lineno, f"isinstance with {', '.join(sorted(hit))}"))
        elif isinstance(node, ast.Compare) and any(map(_is_family, [node.left, *node.comparators])):
            found.append((node.lineno, f"comparison with a family: {ast.unparse(node)}"))
        elif isinstance(node, ast.Compare) and _is_proxy(node):
            found.append((node.lineno, f"proxy for a family: {ast.unparse(node)}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("startswith", "endswith") and any(map(_is_family, node.args)):
            found.append((node.lineno, f"family prefix test: {ast.unparse(node)}"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Attribute) \
                and node.operand.attr == "layout":
            found.append((node.lineno, f"proxy for a family: {ast.unparse(node)} (a model without heads: ask "
                                       "can(ALIGNMENT), or whether its analysis has maps)"))
        elif isinstance(node, ast.Attribute) and node.attr == "network":
            found.append((node.lineno, f"the wrapped network: {ast.unparse(node)} (ask a typed part or a protocol)"))
        elif isinstance(node, ast.Name | ast.Attribute | ast.alias):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) \
                else node.name.rsplit(".", 1)[-1]
            if name in OLD_HELPERS:
                found.append((node.lineno, f"old family helper {name}"))
    return found


def test_the_branch_finder_catches_each_kind_of_branch():
    classes = model_classes()
    assert {"LoadedModel", "PretrainedEncoder", "TransformersModel", "TransformerConfig"} <= classes
    assert not {"LabModel", "Generates", "ScoresHeads", "ReadsResidualStream"} & classes
    injected = {
        "if isinstance(loaded, LoadedModel):\n    pass": "isinstance with LoadedModel",
        "ok = isinstance(m.config, (model.config.TransformerConfig, int))": "isinstance with TransformerConfig",
        "if lab.family == 'bert':\n    pass": "comparison with a family",
        "x = 'transformer' != family": "comparison with a family",
        "y = family in ('bahdanau', 'no-attention')": "comparison with a family",
        "z = family.startswith('transformers:')": "family prefix test",
        "from ui.state import is_toy": "old family helper is_toy",
        "w = entry.runs_in_our_encoder": "old family helper runs_in_our_encoder",
        "if result.special is not None:\n    pass": "proxy for a family",
        "encoder = analysed.encoding is None": "proxy for a family",
        "if result.decode is not None:\n    pass": "proxy for a family",
        "if 'cross' in result.attention:\n    pass": "proxy for a family",
        "gru = 'alignment' not in analysed.maps": "proxy for a family",
        "if 'cross' in lab.layout and analysed.can(STEPS):\n    pass": "proxy for a family",
        "if \"cross\" in maps:  # heads\n    pass": "proxy for a family",
        "encoder = 'encoder_self' in analysed.maps": "proxy for a family",
        "llm = 'decoder_self' in lab.layout and 'encoder_self' not in lab.layout": "proxy for a family",
        "words = lab.network.src_vocab.itos": "the wrapped network",
        "if not lab.layout:  # a GRU seq2seq\n    pass": "proxy for a family",
    }
    for source, what in injected.items():
        found = family_branches(source, classes)
        assert found and found[0][1].startswith(what), (source, found)
    # what pages legitimately do: ask capabilities, name the kind they show, look a kind up once a capability says it
    # is there, look a family's label up, catch a model's error
    allowed = ("if lab.can(STEPS):\n    weights = analysed.maps['cross'].weights\n"
               "label = tr(f'models.family_{lab.family}')\nresults = {'transformer': 1}\nr = results['transformer']\n"
               "if isinstance(speed, SpeedProbeError):\n    pass\nif kind == 'cross':\n    pass\n"
               "written = maps.kind in ('decoder_self', 'cross')\nshape = layout.get('cross', (0, 0))\n"
               "if analysed.can(EMBEDDING) and isinstance(lab, Generates):\n    pass\n"
               "if first is None or lab.decode(ids) is None:\n    pass")
    assert family_branches(allowed, classes) == []


def _modules() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_page_or_view_branches_on_a_model_family(path):
    found = family_branches(path.read_text(encoding="utf-8"), model_classes())
    assert not found, "\n".join(f"{path.relative_to(ROOT)}:{line}: {what}" for line, what in found)
