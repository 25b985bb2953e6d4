"""The train page's pieces: the form, the live status, snapshots, download and upload of checkpoints."""
from __future__ import annotations

import uuid

import streamlit as st

from model.checkpoint import MAX_CHECKPOINT_BYTES, CheckpointError, checkpoint_bytes, load_checkpoint_bytes
from model.data import TASKS
from model.train import FAMILIES, TrainConfig
from ui.models import family_label
from ui.state import USER_MODELS, example_sentences, get_model
from ui.text import escape_markdown
from ui.training import MAX_CONCURRENT_TRAININGS, TrainingJob, start_job
from viz.attention import attention_heatmap
from viz.training import history_frame, training_curves

JOB = "training_job"


def training_form() -> TrainConfig | None:
    """The settings form; returns a config when the user presses Start."""
    job: TrainingJob | None = st.session_state.get(JOB)
    with st.form("train_form"):
        c = st.columns(3)
        family = c[0].selectbox("Model family", FAMILIES, format_func=family_label, key="train_family")
        task = c[1].selectbox("Task", TASKS, key="train_task")
        steps = c[2].slider("Steps", 50, 3000, 600, step=50, key="train_steps")
        c = st.columns(4)
        layers = c[0].slider("Layers (Transformer)", 1, 4, 2, key="train_layers")
        d_model = c[1].select_slider("d_model / hidden size", [32, 64, 128, 256], 128, key="train_width")
        heads = c[2].select_slider("Heads (Transformer)", [1, 2, 4, 8], 4, key="train_heads")
        seed = c[3].number_input("Seed", 0, 10_000, 0, key="train_seed")
        c = st.columns(3)
        schedule = c[0].selectbox("Learning-rate schedule", ["warmup-decay", "constant", "noam"], key="train_schedule",
                                  help="noam: the paper's d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)")
        lr = c[1].select_slider("Learning rate (constant / warmup-decay)", [1e-4, 3e-4, 1e-3, 2e-3, 3e-3], 2e-3,
                                key="train_lr")
        warmup = c[2].slider("Warm-up steps", 0, 1000, 100, step=50, key="train_warmup")
        start = st.form_submit_button("Start training", type="primary", disabled=bool(job and job.active))
    if not start:
        return None
    if family == "transformer" and d_model % heads:
        st.error(f"d_model = {d_model} is not divisible by {heads} heads.")
        return None
    return TrainConfig(model=family, task=task, steps=steps, num_layers=layers, d_model=d_model, num_heads=heads,
                       d_ff=2 * d_model, hidden_size=d_model, embed_dim=min(64, d_model), seed=int(seed),
                       schedule=schedule, lr=lr, warmup=max(warmup, 1), eval_every=max(50, steps // 6),
                       eval_size=150, device="auto")


def _session_alive_check():
    """A thread-safe check that this browser session still exists (always true outside a real server)."""
    from streamlit import runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not runtime.exists():
        return lambda: True
    session_id, instance = ctx.session_id, runtime.get_instance()
    return lambda: instance.is_active_session(session_id)


def launch(config: TrainConfig) -> None:
    st.session_state[JOB] = start_job(config, example_sentences(config.task)[0], session_alive=_session_alive_check())


def _register(job: TrainingJob) -> None:
    """Put the trained model into this session's model list (never into a shared cache)."""
    loaded = job.result.loaded
    last = next((h for h in reversed(job.history) if "val_exact_match" in h), {})
    loaded.metrics = {"test": {"exact_match": last.get("val_exact_match"), "bleu": last.get("val_bleu")}}
    st.session_state.setdefault(USER_MODELS, {})[job.model_id] = loaded


@st.fragment(run_every=1.0)
def live_status() -> None:
    job: TrainingJob | None = st.session_state.get(JOB)
    if job is None:
        return
    cfg = job.config
    if job.state == "waiting":
        st.info(f"Waiting for a free training slot (at most {MAX_CONCURRENT_TRAININGS} trainings run at once "
                "on this server).")
    st.progress(min(job.steps_done / cfg.steps, 1.0),
                text=f"{job.model_id}: step {job.steps_done} / {cfg.steps} · {job.elapsed_s:.1f} s · "
                     f"{job.tokens_per_s:,.0f} tokens/s")
    if job.active:
        st.button("Stop training", on_click=job.stop_requested.set, key="train_stop", type="secondary")
    st.plotly_chart(training_curves(job.history, f"Training {family_label(cfg.model)} on {cfg.task}"),
                    key="train_curves")
    if job.history:
        st.download_button("Download the training curves (CSV)",
                           history_frame(list(job.history)).to_csv(index=False).encode("utf-8"),
                           file_name=f"{job.model_id}_curves.csv", mime="text/csv", key="csv_curves")
    if job.active:
        return
    if job.state == "failed":
        kept = " The weights from the last good step are kept and listed in the sidebar." if job.result else ""
        st.error(escape_markdown(job.message) + kept)
    else:
        st.success(f"{job.message}. The model **{job.model_id}** is now in the sidebar's model list: open any "
                   "page to look inside it.")
    if job.result is not None and job.model_id not in st.session_state.get(USER_MODELS, {}):
        _register(job)
        st.rerun(scope="app")  # the sidebar must list the new model


def snapshot_viewer() -> None:
    job: TrainingJob | None = st.session_state.get(JOB)
    if job is None or not job.snapshots:
        if job is not None and job.config.model == "no-attention":
            st.info("This model has no attention, so there are no attention snapshots.")
        return
    st.subheader("Attention while it learns")
    snaps = list(job.snapshots)
    index = st.select_slider("Snapshot at step", options=list(range(len(snaps))), key="snapshot_index",
                             value=len(snaps) - 1, format_func=lambda i: str(snaps[i].step))
    snap = snaps[index]
    layer = head = 0
    if snap.attention.shape[0] > 1 or snap.attention.shape[1] > 1:
        c = st.columns(2)
        layer = c[0].selectbox("Layer", range(snap.attention.shape[0]), key="snap_layer", format_func=lambda i: str(i + 1))
        head = c[1].selectbox("Head", range(snap.attention.shape[1]), key="snap_head", format_func=lambda i: str(i + 1))
    st.code(" ".join(snap.output_tokens) or "(nothing yet)", language=None)
    st.plotly_chart(attention_heatmap(snap.attention[layer, head], snap.query_tokens, snap.source_tokens,
                                      f"Cross-attention at step {snap.step} (layer {layer + 1}, head {head + 1})"),
                    key="snapshot_heatmap")


def download_buttons() -> None:
    job: TrainingJob | None = st.session_state.get(JOB)
    if job is None or job.result is None:
        return
    if job.checkpoint_files is None:  # serialise the model once, not on every rerun of the page
        loaded = job.result.loaded
        job.checkpoint_files = checkpoint_bytes(loaded.model, loaded.config, loaded.src_vocab, loaded.tgt_vocab,
                                                loaded.task, loaded.metrics, loaded.meta)
    weights, sidecar = job.checkpoint_files
    c = st.columns(2)
    c[0].download_button("Download weights (.safetensors)", weights, f"{job.model_id}.safetensors",
                         mime="application/octet-stream", key="dl_weights")
    c[1].download_button("Download config and vocabulary (.json)", sidecar, f"{job.model_id}.json",
                         mime="application/json", key="dl_json")


def load_upload(files: list[tuple[str, bytes]]) -> str:
    """Validate uploaded (name, bytes) files and add the model to the session; returns its id or raises."""
    weights = [data for name, data in files if name.endswith(".safetensors")]
    sidecars = [data for name, data in files if name.endswith(".json")]
    if len(weights) != 1 or len(sidecars) != 1:
        raise CheckpointError("upload exactly two files: NAME.safetensors (weights) and NAME.json (config and "
                              "vocabulary), as downloaded from this page")
    for name, data in files:
        if len(data) > MAX_CHECKPOINT_BYTES:
            raise CheckpointError(f"{name}: {len(data) / 2**20:.1f} MiB is over the "
                                  f"{MAX_CHECKPOINT_BYTES // 2**20} MiB limit")
    stem = next(name for name, _ in files if name.endswith(".safetensors")).removesuffix(".safetensors")
    loaded = load_checkpoint_bytes(weights[0], sidecars[0], name=stem)
    loaded.model.requires_grad_(False)
    user_models = st.session_state.setdefault(USER_MODELS, {})
    # Unique across the server: cached analyses are keyed by model id and shared by all sessions.
    model_id = f"uploaded-{uuid.uuid4().hex[:8]}"
    user_models[model_id] = loaded
    return model_id


def _load_clicked() -> None:
    """Button callback: runs before the sidebar is drawn, so it may switch the chosen model."""
    files = st.session_state.get("upload_files") or []
    try:
        model_id = load_upload([(f.name, f.getvalue()) for f in files])
    except CheckpointError as error:
        st.session_state["upload_message"] = ("error", f"This checkpoint cannot be loaded: {error}")
    else:
        st.session_state["model_id"] = model_id
        st.session_state["sentence"] = example_sentences(get_model(model_id).task)[0]
        st.session_state["upload_message"] = ("success", f"Loaded as {model_id}; it is now the sidebar's model.")


def upload_form() -> None:
    st.subheader("Load a checkpoint")
    files = st.file_uploader("Weights (.safetensors) and config (.json)", type=["safetensors", "json"],
                             accept_multiple_files=True, key="upload_files",
                             help=f"Safetensors + JSON only (nothing is unpickled), at most "
                                  f"{MAX_CHECKPOINT_BYTES // 2**20} MiB.")
    if files:
        st.button("Load these files", key="upload_load", on_click=_load_clicked)
    kind, message = st.session_state.pop("upload_message", (None, None))
    if kind == "error":
        st.error(escape_markdown(message))
    elif kind == "success":
        st.success(escape_markdown(message))
