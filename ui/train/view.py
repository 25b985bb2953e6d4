"""The train page's pieces: the form, the live status, snapshots, download and upload of checkpoints."""
from __future__ import annotations

import hashlib
import uuid

import streamlit as st

from i18n import tr
from model.checkpoint import MAX_CHECKPOINT_BYTES, CheckpointError, checkpoint_bytes, load_checkpoint_bytes
from model.data import TASKS
from model.train import FAMILIES, TrainConfig
from model.training_speed import SpeedProbeError, TrainingSpeed, evaluation_steps
from serving.internals import session_alive_check
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import presenting
from model.families import trains_attention, trains_heads
from model.memory import return_freed_memory
from ui.models import family_label
from ui.session import WidgetKey, lab_session
from ui.specs.common import TRAINING
from ui.state import MODEL, example_sentences, get_model
from ui.text import escape_markdown
from ui.analysis_queue import heavy, session_name
from runtime.kept_read import KeptRead
from runtime.training_jobs import MAX_CONCURRENT_TRAININGS, TrainingJob, probe_speed, start_job
from ui.train.upload_policy import open_upload_route, uploads_refusal
from ui.widget_spec import SENTENCE
from viz.attention import attention_heatmap, attention_table
from viz.training import history_frame, training_curves
from ui.errors import lab_fragment

UPLOADS = WidgetKey("upload_files")  # the uploader's files, read by the Load button's callback
# Uploaded models a session holds at once: the one just loaded and the one before it (to compare the two); a third
# releases the oldest. Each is up to a 64 MiB checkpoint's weights in memory, held as long as the session (minutes
# after its tab closed), so without a bound every click on Load added one (issue 53).
MAX_UPLOADED_MODELS = 2
# The form's starting values; the advanced four are hidden in presenter mode, where these defaults are used.
# The form is not restored from links: its widgets keep value= defaults because Streamlit can reset a form widget
# to its declared default when the training fragment reruns the app, and that default must be a sensible setting.
DEFAULTS = {"train_steps": 1000, "train_layers": 2, "train_width": 128, "train_heads": 4, "train_seed": 0,
            "train_schedule": "warmup-decay", "train_lr": 3e-3, "train_warmup": 50}
SCHEDULES, RATES = ("warmup-decay", "constant", "noam"), (1e-4, 3e-4, 1e-3, 2e-3, 3e-3)
ADVANCED = ("train_seed", "train_schedule", "train_lr", "train_warmup")


def _identifier(value: str) -> str:
    return value.replace("-", "_")


def training_form() -> TrainConfig | None:
    """The settings form; returns a config when the user presses Start."""
    job = lab_session().training.job
    presenter = presenting()
    with st.form("train_form"):
        c = st.columns(3)
        family = c[0].selectbox(tr("train.family"), FAMILIES, format_func=family_label, key="train_family")
        task = c[1].selectbox(tr("train.task"), TASKS, key="train_task",
                              format_func=lambda t: tr(f"train.task_{_identifier(t)}"))
        steps = c[2].slider(tr("train.steps"), 50, 3000, DEFAULTS["train_steps"], step=50, key="train_steps")
        c = st.columns(3 if presenter else 4)
        layers = c[0].slider(tr("train.layers"), 1, 4, DEFAULTS["train_layers"], key="train_layers")
        d_model = c[1].select_slider(tr("train.width"), [32, 64, 128, 256], DEFAULTS["train_width"],
                                     key="train_width")
        heads = c[2].select_slider(tr("train.heads"), [1, 2, 4, 8], DEFAULTS["train_heads"], key="train_heads")
        if presenter:
            seed, schedule, lr, warmup = (DEFAULTS[key] for key in ADVANCED)
        else:
            seed = c[3].number_input(tr("train.seed"), 0, 10_000, DEFAULTS["train_seed"], key="train_seed")
            c = st.columns(3)
            schedule = c[0].selectbox(tr("train.schedule"), SCHEDULES, key="train_schedule",
                                      format_func=lambda v: tr(f"train.schedule_{_identifier(v)}"),
                                      help=tr("train.schedule_help"))
            lr = c[1].select_slider(tr("train.lr"), RATES, DEFAULTS["train_lr"], key="train_lr")
            warmup = c[2].slider(tr("train.warmup"), 0, 1000, DEFAULTS["train_warmup"], step=50, key="train_warmup")
        start = st.form_submit_button(tr("train.start"), type="primary", disabled=bool(job and job.active))
    if trains_heads(family) and d_model % heads:
        if start:
            st.error(tr("train.not_divisible", d_model=d_model, heads=heads))
        return None
    config = form_config(family, task, steps, layers, d_model, heads, int(seed), schedule, lr, warmup)
    if not start:
        if not (job and job.active):
            time_estimate(config)
        return None
    return config


def form_config(family: str, task: str, steps: int, layers: int, d_model: int, heads: int,
                seed: int = DEFAULTS["train_seed"], schedule: str = DEFAULTS["train_schedule"],
                lr: float = DEFAULTS["train_lr"], warmup: int = DEFAULTS["train_warmup"]) -> TrainConfig:
    """The TrainConfig the form's values stand for (the one Start trains, and the one the estimate is for).

    Pre-norm (norm_first) with lr 3e-3 and 50 warm-up steps: on en-fr it learns faster in the first few hundred
    steps than the paper's post-norm at 2e-3, what a run in a lesson has."""
    if trains_heads(family):
        shape = {"num_layers": layers, "d_model": d_model, "num_heads": heads, "norm_first": True, "d_ff": 2 * d_model}
    else:
        shape = {"hidden_size": d_model, "embed_dim": min(64, d_model)}
    return TrainConfig.for_model(family, task=task, steps=steps, seed=seed, schedule=schedule, lr=lr,
                                 warmup=max(warmup, 1), eval_every=max(50, steps // 6), eval_size=150, device="auto",
                                 **shape)


def _probe(shape: tuple[str, str, int, int, int]) -> TrainingSpeed | SpeedProbeError:
    family, task, layers, d_model, heads = shape
    try:
        return probe_speed(form_config(family, task, DEFAULTS["train_steps"], layers, d_model, heads))
    except SpeedProbeError as error:  # caught inside: the page draws the refusal
        return error


# Kept by runtime/kept_read.py, not st.cache_resource(ttl=1800): Streamlit's TTL cache looks an entry up twice, each
# against the clock, so a run reaching it as its half hour ends got a KeyError and its page failed.
SPEEDS: KeptRead[TrainingSpeed | SpeedProbeError] = KeptRead(_probe, seconds=1800, max_keys=32)


def measured_speed(family: str, task: str, layers: int, d_model: int,
                   heads: int) -> TrainingSpeed | SpeedProbeError:
    """This server's speed for one model shape, measured by a short probe (a few seconds) once per process and
    half hour, shared by every session: the estimate is this server's, under its current load. A probe that could
    time no step returns its SpeedProbeError, kept like a speed (so a rerun does not probe again). Called through
    speed_for_the_form, in the analysis queue."""
    return SPEEDS.get((family, task, layers, d_model, heads))


def speed_for_the_form(config: TrainConfig) -> TrainingSpeed | SpeedProbeError | None:
    """measured_speed for the form's shape, probed by the analysis worker in the browser's turn (ui/analysis_queue.py:
    one running and one waiting per browser, a newer form replacing its waiting probe, a probe no page waits for
    stopped), the page off its slot meanwhile; None when it ran past the time limit or another tab replaced it (the page
    has said so). Issue 53: outside any queue, three sessions changing the form ran 12 probes of 6–36 s in 74 s. The
    page waits off its slot, not inside the cached function: a page taking its slot back inside would wait, holding that
    function's lock, on a page that holds the slot and waits for the lock."""
    shape = form_shape(config)
    return heavy(("train_speed_probe", config.family, config.task, *shape),
                 lambda: measured_speed(config.family, config.task, *shape), inline=False)


def form_shape(config: TrainConfig) -> tuple[int, int, int]:
    """(layers, width, heads) of a form_config(): a seq2seq model has one layer, width hidden_size and no heads."""
    model = config.model
    if trains_heads(config.family):
        return model.num_layers, model.d_model, model.num_heads
    return DEFAULTS["train_layers"], model.hidden_size, DEFAULTS["train_heads"]


def format_duration(seconds: float) -> str:
    whole = max(1, round(seconds))
    if whole < 60:
        return tr("train_estimate.seconds", seconds=whole)
    return tr("train_estimate.minutes", minutes=whole // 60, seconds=f"{whole % 60:02d}")


def time_estimate(config: TrainConfig) -> None:
    """Before Start: how long these settings will take here, from the measured speed (never a fixed number)."""
    with st.spinner(tr("train_estimate.measuring")):
        speed = speed_for_the_form(config)
    if speed is None:  # past the time limit, or replaced by a newer form: the note says which
        return
    if isinstance(speed, SpeedProbeError):
        st.warning(tr("training_probe.no_estimate", why=tr(f"train.job_{speed.reason}", step=speed.step)))
        return
    layers, width, _ = form_shape(config)
    st.caption(tr("train_estimate.estimate", duration=format_duration(speed.estimate_seconds(config)),
                  steps=config.steps, layers=layers, width=width,
                  step_ms=f"{1000 * speed.run_step_s:.0f}", evaluations=len(evaluation_steps(config)), eval_s=f"{speed.eval_s:.1f}"))


def launch(config: TrainConfig) -> None:
    job = start_job(config, example_sentences(config.task)[0], session_alive=session_alive_check(),
                    session=session_name())
    training = lab_session().training
    training.job = job
    TRAINING.set(job.model_id)  # in the URL until the job ends (write_to_url)
    training.lost = None


def lost_training_notice() -> None:
    """A session that opens with a running training in its URL but has no such job: say it is lost (any page).

    This happens when the replica that ran it died and HAProxy moved the student to another one (serve.py), or
    when the tab was reloaded: a training lives in one server process and one browser session.
    """
    training = lab_session().training
    job, marker = training.job, TRAINING.get()
    if marker and (job is None or job.model_id != marker):
        training.lost = marker
    if marker and (job is None or job.model_id != marker or not job.active):
        TRAINING.set(None)  # only a running training of this session stays in the URL
    lost = training.lost
    if lost and (job is None or not job.active):
        st.warning(tr("serve.training_lost", model=escape_markdown(lost)), icon=":material/sync_problem:")


def _register(job: TrainingJob) -> None:
    """Put the trained model into this session's model list (never into a shared cache)."""
    loaded = job.result.loaded
    last = next((h for h in reversed(job.history) if "val_exact_match" in h), {})
    loaded.metrics = {"test": {"exact_match": last.get("val_exact_match"), "bleu": last.get("val_bleu")}}
    lab_session().training.user_models[job.model_id] = loaded


def job_message(job: TrainingJob) -> str:
    """How the job ended, in the reader's language (the thread recorded an id and values, not text)."""
    values = {k: escape_markdown(v) if k == "error" else v for k, v in job.message_values.items()}
    return tr(f"train.{job.message_key}", **values)


@lab_fragment(run_every=1.0)
def live_status() -> None:
    job = lab_session().training.job
    if job is None:
        return
    cfg = job.config
    if job.state == "waiting":
        st.info(tr("train.waiting", place=max(job.place, 1), slots=MAX_CONCURRENT_TRAININGS))
    st.progress(min(job.steps_done / cfg.steps, 1.0),
                text=tr("train.progress", model=job.model_id, done=job.steps_done, total=cfg.steps,
                        seconds=f"{job.elapsed_s:.1f}", speed=f"{job.tokens_per_s:,.0f}"))
    if job.active:
        st.button(tr("train.stop"), on_click=job.stop_requested.set, key="train_stop", type="secondary")
    history = list(job.history)  # the thread appends while we draw: one copy for the chart and its CSV
    task = tr(f"train.task_{_identifier(cfg.task)}")
    show_chart(training_curves(history, tr("train.curves_title", family=family_label(cfg.family), task=task),
                               words=words_for("train", "compare")),
               f"training_curves_{job.model_id}", key="train_curves", table=lambda: history_frame(history))
    if job.active:
        return
    if job.state == "failed":
        st.error(tr("train.kept" if job.result else "train.failed", reason=job_message(job)))
    else:
        st.success(tr("train.done", reason=job_message(job), model=job.model_id))
    if job.result is not None and job.model_id not in lab_session().training.user_models:
        _register(job)
        st.rerun(scope="app")  # the sidebar must list the new model


def snapshot_viewer() -> None:
    job = lab_session().training.job
    if job is None or not job.snapshots:
        if job is not None and not trains_attention(job.config.family):
            st.info(tr("train.no_snapshots"))
        return
    st.subheader(tr("train.snapshots_title"))
    if not presenting():
        st.caption(tr("train.snapshots_caption"))
    snaps = list(job.snapshots)
    index = st.select_slider(tr("train.snapshot"), options=list(range(len(snaps))), key="snapshot_index",
                             value=len(snaps) - 1, format_func=lambda i: str(snaps[i].step))
    snap = snaps[index]
    layer = head = 0
    if snap.attention.shape[0] > 1 or snap.attention.shape[1] > 1:
        c = st.columns(2)
        layer = c[0].selectbox(tr("train.snapshot_layer"), range(snap.attention.shape[0]), key="snap_layer",
                               format_func=lambda i: str(i + 1))
        head = c[1].selectbox(tr("train.snapshot_head"), range(snap.attention.shape[1]), key="snap_head",
                              format_func=lambda i: str(i + 1))
    st.code(" ".join(snap.output_tokens) or tr("train.nothing_yet"), language=None)
    weights = snap.attention[layer, head]
    show_chart(attention_heatmap(weights, snap.query_tokens, snap.source_tokens,
                                 tr("train.snapshot_title", step=snap.step, layer=layer + 1, head=head + 1),
                                 words=words_for("attention")),
               f"training_snapshot_step{snap.step}_L{layer + 1}_H{head + 1}", key="snapshot_heatmap",
               table=lambda: attention_table(weights, snap.query_tokens, snap.source_tokens,
                                             words=words_for("attention")))


def download_buttons() -> None:
    job = lab_session().training.job
    if job is None or job.result is None or presenting():
        return
    if job.checkpoint_files is None:  # serialise the model once, not on every rerun of the page
        loaded = job.result.loaded
        job.checkpoint_files = checkpoint_bytes(loaded.model, loaded.config, loaded.src_vocab, loaded.tgt_vocab,
                                                loaded.task, loaded.metrics, loaded.meta)
    weights, sidecar = job.checkpoint_files
    c = st.columns(2)
    c[0].download_button(tr("train.download_weights"), weights, f"{job.model_id}.safetensors",
                         mime="application/octet-stream", key="dl_weights")
    c[1].download_button(tr("train.download_json"), sidecar, f"{job.model_id}.json",
                         mime="application/json", key="dl_json")


def upload_limit_mib() -> int:
    """The largest file an upload takes, in MiB: Streamlit's server.maxUploadSize (the browser refuses a larger
    file before sending it) or the checkpoint limit, whichever is smaller."""
    return min(int(st.get_option("server.maxUploadSize")), MAX_CHECKPOINT_BYTES // 2**20)


def _checked_pair(files: list[tuple[str, bytes]]) -> tuple[tuple[str, bytes], tuple[str, bytes]]:
    """The one weights file and the one config file, or a CheckpointError saying which file is missing, extra or
    too big. A file over maxUploadSize never reaches the server (the browser refuses it), so a missing file says
    that it may have been too big."""
    limit = upload_limit_mib()
    for name, _ in files:
        if not name.endswith((".safetensors", ".json")):
            raise CheckpointError(tr("train.upload_other_file", name=name))
    weights = [(name, data) for name, data in files if name.endswith(".safetensors")]
    sidecars = [(name, data) for name, data in files if name.endswith(".json")]
    if not weights and not sidecars:
        raise CheckpointError(tr("train.upload_nothing", limit=limit))
    if len(weights) > 1 or len(sidecars) > 1:
        raise CheckpointError(tr("train.upload_two_files"))
    if not weights or not sidecars:
        missing = "upload_missing_weights" if not weights else "upload_missing_config"
        raise CheckpointError(tr(f"train.{missing}", present=(weights or sidecars)[0][0], limit=limit))
    for name, data in files:
        if len(data) > MAX_CHECKPOINT_BYTES:
            raise CheckpointError(tr("train.upload_too_large", name=name, size=f"{len(data) / 2**20:.1f}",
                                     limit=MAX_CHECKPOINT_BYTES // 2**20))
    return weights[0], sidecars[0]


def upload_digest(weights: bytes, sidecar: bytes) -> str:
    """The sha256 of an upload's two files (the weights' length first, so no two pairs of files share one text)."""
    digest = hashlib.sha256(len(weights).to_bytes(8, "little"))
    digest.update(weights)
    digest.update(sidecar)
    return digest.hexdigest()


def load_upload(files: list[tuple[str, bytes]]) -> str:
    """Validate uploaded (name, bytes) files and add the model to the session; returns its id or raises. Files this
    session has loaded already give the model they loaded (nothing is read again); past MAX_UPLOADED_MODELS uploads
    the oldest is released."""
    refusal = uploads_refusal()  # the uploader is hidden then; this also refuses a request that skips the page
    if refusal:
        raise CheckpointError(tr(refusal))
    (weights_name, weights), (_, sidecar) = _checked_pair(files)
    training = lab_session().training
    user_models, uploads = training.user_models, training.uploads
    digest = upload_digest(weights, sidecar)
    known = uploads.get(digest)
    if known in user_models:
        return known
    loaded = load_checkpoint_bytes(weights, sidecar, name=weights_name.removesuffix(".safetensors"))
    loaded.model.requires_grad_(False)
    for old_digest in [d for d, model_id in uploads.items() if model_id not in user_models]:
        del uploads[old_digest]  # (a model that left the list some other way)
    released = False
    while len(uploads) >= MAX_UPLOADED_MODELS:
        user_models.pop(uploads.pop(next(iter(uploads))), None)
        released = True
    # Unique across the server: cached analyses are keyed by model id and shared by all sessions.
    model_id = f"uploaded-{uuid.uuid4().hex[:8]}"
    user_models[model_id] = loaded
    uploads[digest] = model_id
    if released:
        return_freed_memory()  # the released weights' pages go back to the system, not only to the heap
    return model_id


def _load_clicked() -> None:
    """Button callback: runs before the sidebar is drawn, so it may switch the chosen model."""
    files = UPLOADS.get() or []
    training = lab_session().training
    before = set(training.user_models)
    try:
        model_id = load_upload([(f.name, f.getvalue()) for f in files])
    except CheckpointError as error:
        # The detail comes from model/checkpoint.py in English; our sentence around it is translated.
        training.upload_message = ("error", tr("train.upload_failed", error=escape_markdown(str(error))))
    else:
        MODEL.set(model_id)
        SENTENCE.set(example_sentences(get_model(model_id).task)[0])
        said = [tr("train.upload_again" if model_id in before else "train.upload_loaded", model=model_id)]
        said += [tr("train.upload_released", model=gone, count=MAX_UPLOADED_MODELS)
                 for gone in sorted(before - set(training.user_models))]
        training.upload_message = ("success", " ".join(said))


def upload_form() -> None:
    if presenting():
        open_upload_route(False)
        return
    st.subheader(tr("train.upload_title"))
    refusal = uploads_refusal()
    open_upload_route(refusal is None)
    if refusal:
        st.info(tr(refusal), icon=":material/block:")
        return
    files = st.file_uploader(tr("train.upload_files"), type=["safetensors", "json"], accept_multiple_files=True,
                             key=UPLOADS.key, help=tr("train.upload_help", limit=upload_limit_mib()))
    if files:
        st.button(tr("train.upload_load"), key="upload_load", on_click=_load_clicked)
    training = lab_session().training
    (kind, message), training.upload_message = training.upload_message or (None, None), None
    if kind == "error":
        st.error(message)
    elif kind == "success":
        st.success(message)
