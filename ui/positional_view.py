"""The positional-encoding page's sections: the cached analysis of the sinusoidal table (model/foundations/
positional.py) drawn as the formula, the matrix, its curves, dials against a binary counter, the similarity of
positions, the rotation by an offset and a trained model's own table."""
from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from i18n import tr
from model.foundations.positional import SinusoidalAnalysis, analyse_sinusoidal, summarize_position_table
from model.foundations.rope import SMOLLM2_ROPE_BASE, RopeAnalysis, analyse_rope
from ui.charts import folded_section, shared_figure, show_chart
from ui.language import words_for
from ui.presenter import explanations_folded, presenting
from ui.specs.positional import D_MODEL, DIMS, LENGTH, OFFSET, POSITION, folded_key
from ui.state import get_model, selected_model_id
from ui.text import escape_markdown
from ui.widget_spec import prepare, spec_slider
from runtime.result_cache import memoized
from viz.attention import html_escaped
from viz.positional import (DEFAULT_DIMS, curves_table, dials_and_counter, dials_table, dimension_curves,
                            dimension_name, encoding_heatmap, rotation_check, rotation_matrix_heatmap,
                            similarity_by_offset, similarity_heatmap)
from viz.rope import rotation_of_pairs, score_at_distance, scores_by_position


@memoized
def sinusoidal(length: int, d_model: int, k: int) -> SinusoidalAnalysis:
    return analyse_sinusoidal(length, d_model, k)


@memoized
def rope(length: int, head_dim: int, k: int) -> RopeAnalysis:
    return analyse_rope(length, head_dim, k)


def positional_controls() -> tuple[int, int, int]:
    """The page's three sliders in a row -> (length, d_model, offset k)."""
    c = st.columns(3)
    d_model = spec_slider(D_MODEL, "d_model", where=c[0], help=tr("positional.d_model_help"))
    length = spec_slider(LENGTH, tr("positional.length"), where=c[1])
    # default lines of four clearly different wavelengths (2π, ~26, ~112 and ~2000 positions at d_model 64), sin
    # and cos
    DIMS.set([d for d in DIMS.get(DEFAULT_DIMS) if d < d_model])
    k = spec_slider(OFFSET, tr("positional.offset"), where=c[2], help=tr("positional.offset_help"))
    return length, d_model, k


def show_formula(where: DeltaGenerator) -> None:
    where.subheader(tr("positional.formula_title"))
    where.latex(r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right) \qquad "
                r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)")
    where.write(tr("positional.formula_text"))


def show_matrix(pe: SinusoidalAnalysis, length: int, d_model: int) -> None:
    st.subheader(tr("positional.matrix_title"))
    # shared_figure: the page's figures depend only on its sliders, and a class mostly looks at the same settings.
    show_chart(shared_figure(("pe_matrix", length, d_model), lambda: encoding_heatmap(
                   pe.table, tr("positional.matrix_chart", length=length, d_model=d_model),
                   words=words_for("positional"))),
               f"positional_encoding_T{length}_d{d_model}", key="pe_matrix")


def show_curves(pe: SinusoidalAnalysis, length: int, d_model: int, presenter: bool) -> None:
    st.subheader(tr("positional.curves_title"))
    if presenter:  # a secondary knob: the curves keep the dimensions chosen before
        dims = DIMS.get()
    else:
        dims = st.multiselect(tr("positional.dims"), range(d_model), key=DIMS.key,
                              format_func=lambda dim: dimension_name(dim, words=words_for("positional")))
    show_chart(shared_figure(("pe_curves", length, d_model, tuple(dims)), lambda: dimension_curves(
                   pe.table, dims, fine=pe.fine_table, fine_positions=pe.fine_positions,
                   words=words_for("positional"))),
               f"positional_curves_d{d_model}", key="pe_curves", table=lambda: curves_table(pe.table, dims,
                                                                                            words=words_for("positional")))
    if not presenter:
        st.caption(tr("lecture.curves_caption"))


# The secondary sections are folded, and built only when opened: the page opens on the formula, the matrix and the
# curves, and a class that does not open them costs the server two charts a visit instead of eight.

def _opened(section: DeltaGenerator, title_key: str, state_key: str, icon: str) -> DeltaGenerator | None:
    """The folded section drawn in `section`: its container when the user has opened it, else None."""
    with section:
        container, is_open = folded_section(tr(title_key), state_key, icon)
    return container if is_open else None


def show_dials(section: DeltaGenerator, pe: SinusoidalAnalysis, length: int, d_model: int) -> int:
    """The dials section (folded); returns the example position, which the rotation check shows too."""
    dials_section = _opened(section, "positional.dials_title", folded_key("dials"), ":material/speed:")
    if dials_section is None:
        return prepare(POSITION)  # the rotation check's example position, kept while the dials are folded
    dials_first = explanations_folded()  # projected or a lesson stop's: the dials, then their explanation
    with dials_section:
        if not dials_first:
            st.write(tr("positional.dials_text"))
        position = spec_slider(POSITION, tr("positional.position"))
        show_chart(shared_figure(("pe_dials", length, d_model, position), lambda: dials_and_counter(
                       pe.angles[position], pe.bits[position], pe.wavelengths, position,
                       words=words_for("positional"))),
                   f"positional_dials_p{position}_d{d_model}", key="pe_dials",
                   table=lambda: dials_table(pe.angles[position], pe.wavelengths, words=words_for("positional")))
        if dials_first:  # under the dials (an expander cannot hold the folded one explanation() would make)
            st.write(tr("positional.dials_text"))
    return position


def show_similarity(section: DeltaGenerator, pe: SinusoidalAnalysis, length: int, d_model: int,
                    presenter: bool) -> None:
    similarity_section = _opened(section, "positional.similarity_title", folded_key("similarity"), ":material/grid_on:")
    if similarity_section is None:
        return
    similarity_section.write(tr("positional.similarity_text"))
    left, right = similarity_section.columns(2)
    show_chart(shared_figure(("pe_similarity", length, d_model),
                             lambda: similarity_heatmap(pe.similarity, words=words_for("positional"))),
               f"positional_similarity_T{length}_d{d_model}", key="pe_similarity",
               where=left)
    references = sorted({0, length // 4, length // 2, length - 1})
    show_chart(shared_figure(("pe_offset", length, d_model),
                             lambda: similarity_by_offset(pe.similarity, references, words=words_for("positional"))),
               f"positional_similarity_by_offset_T{length}_d{d_model}",
               key="pe_offset", where=right)
    if not presenter:
        similarity_section.caption(tr("positional.similarity_caption", spread=f"{pe.diagonal_spread:.1e}",
                                      largest=f"{pe.similarity.max():.0f}"))


def show_rotation(section: DeltaGenerator, pe: SinusoidalAnalysis, length: int, d_model: int, k: int,
                  position: int) -> None:
    rotation_section = _opened(section, "positional.rotation_title", folded_key("rotation"), ":material/rotate_right:")
    if rotation_section is None:
        return
    rotation_section.write(tr("positional.rotation_text", k=k))
    error = float(pe.rotation_error.max())
    rotation_section.metric(tr("positional.rotation_metric", k=k, positions=length - k, d_model=d_model),
                            f"{error:.1e}")
    left, right = rotation_section.columns([3, 2])
    show_chart(shared_figure(("pe_rotation", length, d_model, k, position),
                             lambda: rotation_check(pe.shifted, pe.rotated, min(position, length - k - 1), k,
                                                    words=words_for("positional"))),
               f"positional_rotation_check_k{k}_d{d_model}", key="pe_rotation", where=left)
    show_chart(shared_figure(("pe_rotation_matrix", length, d_model, k),
                             lambda: rotation_matrix_heatmap(pe.rotation, k, words=words_for("positional"))),
               f"positional_rotation_matrix_M{k}_d{d_model}", key="pe_rotation_matrix", where=right)


def show_rope(section: DeltaGenerator, length: int, d_model: int, k: int) -> None:
    """RoPE (folded): a query's 2-D pairs turned by position, and q·k depending on the distance only; d_model is
    read as the head width d_k, the page's length and offset k as the positions and the distance."""
    rope_section = _opened(section, "rope.title", folded_key("rope"), ":material/autorenew:")
    if rope_section is None:
        return
    analysis = rope(length, d_model, k)
    # Projected, or under a lesson stop about this section: the text folds, so the charts start on the first screen
    text_place = rope_section.expander(tr("rope.text_title")) if explanations_folded() else rope_section
    text_place.write(tr("rope.text", d_k=d_model, base=f"{SMOLLM2_ROPE_BASE:,.0f}"))
    def metric() -> None:  # above the charts; under them when projected, so that they start on the first screen
        rope_section.metric(tr("rope.metric", positions=length, d_k=d_model), f"{analysis.diagonal_spread:.1e}",
                            help=tr("rope.metric_help", largest=f"{analysis.largest_score:.1f}"))
    if not presenting():
        metric()
    left, right = rope_section.columns(2)
    show_chart(shared_figure(("pe_rope_pairs", length, d_model), lambda: rotation_of_pairs(
                   analysis.query_pairs, analysis.pairs, analysis.pair_angles, d_model,
                   tr("rope.chart.pair_title", last=length - 1), words=words_for("rope"))),
               f"positional_rope_pairs_T{length}_d{d_model}", key="pe_rope_pairs", where=left)
    show_chart(shared_figure(("pe_rope_scores", length, d_model), lambda: scores_by_position(
                   analysis.scores, tr("rope.chart.scores_title"), words=words_for("rope"))),
               f"positional_rope_scores_T{length}_d{d_model}", key="pe_rope_scores", where=right)
    if presenting():
        metric()
    show_chart(shared_figure(("pe_rope_distance", length, d_model, k), lambda: score_at_distance(
                   analysis.at_distance, k, analysis.unrotated_score, tr("rope.chart.distance_title", k=k),
                   words=words_for("rope"))),
               f"positional_rope_distance_k{k}_T{length}_d{d_model}", key="pe_rope_distance", where=rope_section)
    spread = float(analysis.at_distance.max() - analysis.at_distance.min())
    rope_section.caption(tr("rope.caption", unrotated=f"{analysis.unrotated_score:.4f}", k=k,
                            score=f"{float(analysis.at_distance.mean()):.4f}", spread=f"{spread:.1e}"))


def show_trained_table(section: DeltaGenerator) -> None:
    """The selected model's own position table, against the sinusoidal formula (folded)."""
    trained_section = _opened(section, "positional.trained_title", folded_key("trained"), ":material/model_training:")
    if trained_section is None:
        return
    model_id = selected_model_id()
    lab = get_model(model_id)
    shown_id = escape_markdown(model_id)
    if lab.positions == "table":  # a position table we can read (model.families)
        summary = summarize_position_table(lab.position_table())
        rows = min(len(summary.table), 64)
        trained_section.write(tr("positional.trained_text", model=shown_id,
                                 kind=tr(f"positional.kind_{summary.kind}"), positions=summary.table.shape[0],
                                 d_model=summary.table.shape[1]))
        if summary.kind == "sinusoidal":
            trained_section.metric(tr("positional.trained_metric_sinusoidal"),
                                   f"{summary.max_diff_from_sinusoidal:.1e}")
        else:
            trained_section.metric(tr("positional.trained_metric_learned"), f"{summary.max_diff_from_sinusoidal:.2f}")
        title = tr("positional.trained_chart", model=html_escaped(model_id), rows=rows)
        # Model ids are unique on the server (shipped names, trained-N, uploaded-<uuid>) and a model never changes.
        show_chart(shared_figure(("pe_trained", model_id, rows), lambda: encoding_heatmap(
                       summary.table[:rows], title, bound=1.0 if summary.kind == "sinusoidal" else None,
                       words=words_for("positional"))),
                   f"positional_table_{model_id}", key="pe_trained", where=trained_section)
    elif lab.positions == "learned":
        trained_section.info(tr("bert.positional", model=shown_id, positions=lab.config.max_position_embeddings,
                                d_model=lab.config.hidden_size))
    elif lab.positions != "recurrence":
        trained_section.info(tr("bert.positional_other", model=shown_id))
    else:
        trained_section.info(tr("positional.rnn", model=shown_id))
