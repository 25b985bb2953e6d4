"""Training in the browser: one background job per session, bounded server-wide, stoppable.

The job runs model.train.train() in a thread so the page stays responsive; the page polls the job
(plain Python state, no Streamlit calls from the thread) with a fragment that reruns every second.
The thread has no browser session, so it records how the job ended as a message id with values
(job.message_key, job.message_values) and the page words it in the reader's language when it draws.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from i18n import DEFAULT_LANGUAGE, translate
from model.checkpoint import LoadedModel
from model.data import Dataset
from model.decode import greedy_decode
from model.families import adapt, trains_attention
from model.train import StepInfo, TrainConfig, TrainResult, make_training_data, train
from model.training_speed import TrainingSpeed, measure_training_speed

# At most this many trainings run at once on the server; each uses one torch thread, so forward passes of
# other students still find a free core.
MAX_CONCURRENT_TRAININGS = max(1, (os.cpu_count() or 2) - 1)
_training_slots = threading.BoundedSemaphore(MAX_CONCURRENT_TRAININGS)
_job_numbers = itertools.count(1)
SNAPSHOTS = 12  # attention snapshots of the fixed example per run
SESSION_CHECK_EVERY = 10  # steps between checks that the student's session still exists


@dataclass
class Snapshot:
    step: int
    output_tokens: list[str]
    source_tokens: list[str]
    query_tokens: list[str]
    attention: np.ndarray  # transformer: cross (L, h, T, S); bahdanau: alignment (1, 1, T, S);
    # decoder-only: its one causal map (L, h, N, N)


@dataclass
class TrainingJob:
    config: TrainConfig
    example: str
    model_id: str
    state: str = "waiting"  # waiting -> running -> finished | stopped | failed
    message: str = ""  # in English, for logs and scripts; pages show tr(f"train.{message_key}", **message_values)
    message_key: str = ""
    message_values: dict = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    tokens_per_s: float = 0.0
    elapsed_s: float = 0.0
    result: TrainResult | None = None
    stop_requested: threading.Event = field(default_factory=threading.Event)
    session_closed: bool = False
    checkpoint_files: tuple[bytes, bytes] | None = None  # (safetensors, JSON) for download, made once
    thread: threading.Thread | None = None

    @property
    def active(self) -> bool:
        return self.state in ("waiting", "running")

    @property
    def steps_done(self) -> int:
        return len(self.history)

    def end(self, state: str, key: str, **values: object) -> None:
        """Record how the job ended: a message id (train.<key> in i18n/*/train.toml) and its values."""
        self.message_key, self.message_values = key, values
        self.message = translate(DEFAULT_LANGUAGE, f"train.{key}", **values)
        self.state = state  # last: the page reads the message once the state says the job is over


def _snapshot(model, data: Dataset, task: str, example: str, step: int, family: str) -> Snapshot | None:
    if not trains_attention(family):
        return None
    loaded = LoadedModel(model, model.cfg, data.src_vocab, data.tgt_vocab, task)
    was_training = model.training
    model.eval()
    result = greedy_decode(loaded, example, max_steps=40)
    if "cross" in result.attention or "alignment" in result.attention:
        model.train(was_training)
        # rows: the token written at each step, for every family (the convention of every decoder chart)
        queries = result.written_tokens
        # a Transformer's cross-attention heads (L, h, T, S), or the one additive alignment (T, S) as (1, 1, T, S)
        maps = result.attention["cross"] if "cross" in result.attention else result.attention["alignment"][None, None]
        return Snapshot(step, result.output_tokens, result.source.tokens, queries, maps)
    # No attention between two sequences: one causal map over the whole sequence (a decoder-only translator's
    # "<bos> english ⟶ french"), (L, h, N, N) with its own tokens on both axes, as its adapter analyses it.
    analysed = adapt("snapshot", loaded).analyse(example)
    model.train(was_training)
    (maps,) = analysed.maps.values()
    return Snapshot(step, analysed.output_tokens, maps.key_tokens, maps.query_tokens, maps.weights)


def start_job(config: TrainConfig, example: str, data: Dataset | None = None,
              session_alive: Callable[[], bool] = lambda: True) -> TrainingJob:
    """Start training in a background thread; returns at once.

    session_alive is polled every few steps: when the student's browser session is gone, training stops, so
    the thread ends and the model is freed with the session instead of running on for nobody.
    """
    # The number is unique in this server process, so cached analyses keyed by model id never mix two users' models.
    job = TrainingJob(config, example, model_id=f"my-{config.family}_{config.task}-{next(_job_numbers)}")
    every = max(1, config.steps // SNAPSHOTS)

    def on_step(info: StepInfo) -> bool:
        record = {"step": info.step, "loss": info.loss, "lr": info.lr, "elapsed_s": info.elapsed_s,
                  "token_accuracy": info.token_accuracy}
        if info.eval:
            record.update({f"val_{k}": v for k, v in info.eval.items() if k != "sentences"})
        job.history.append(record)
        job.tokens_per_s, job.elapsed_s = info.tokens_per_s, info.elapsed_s
        if info.step % every == 0 or info.step == info.total_steps:
            snap = _snapshot(model_ref[0], dataset, config.task, example, info.step, config.family)
            if snap is not None:
                job.snapshots.append(snap)
        if info.step % SESSION_CHECK_EVERY == 0 and not session_alive():
            job.session_closed = True
            return True
        return job.stop_requested.is_set()

    model_ref: list = [None]
    dataset = data

    def run() -> None:
        nonlocal dataset
        with _training_slots:
            if job.stop_requested.is_set():
                job.end("stopped", "job_not_started")
                return
            job.state = "running"
            torch.set_num_threads(1)  # one core per training; the rest serve pages
            try:
                dataset = dataset or make_training_data(config)
                result = train(config, data=dataset, on_step=on_step, on_model=lambda m: model_ref.__setitem__(0, m))
                job.result = result
                if result.reason.startswith("nonfinite"):
                    job.end("failed", f"job_{result.reason}", step=len(result.history) + 1)
                else:
                    reason = "session_closed" if job.session_closed else result.reason
                    job.end("finished" if reason == "finished" else "stopped", f"job_{reason}",
                            steps=len(result.history), seconds=f"{result.seconds:.1f}")
            except Exception as error:  # shown to the user as a message, never a traceback
                job.end("failed", "job_error", error=str(error))
            finally:  # optimiser state, gradients, activations and the data are garbage now: return their pages
                from model.memory import return_freed_memory

                model_ref[0], dataset = None, None
                return_freed_memory()

    job.thread = threading.Thread(target=run, name=job.model_id, daemon=True)
    job.thread.start()
    return job


def probe_speed(config: TrainConfig) -> TrainingSpeed:
    """Measure config's data, step and evaluation seconds as a job runs them: in its own thread, one torch thread.
    An error in the probe (SpeedProbeError: no step could be timed) is raised here, in the caller's thread."""
    measured: list = []

    def run() -> None:
        torch.set_num_threads(1)  # as run() above
        try:
            measured.append(measure_training_speed(config))
        except Exception as error:  # a thread's exception would only reach stderr: hand it to the caller
            measured.append(error)

    thread = threading.Thread(target=run, name="training-speed-probe", daemon=True)
    thread.start()
    thread.join()
    if not measured:
        raise RuntimeError("the training speed probe failed")
    if isinstance(measured[0], Exception):
        raise measured[0]
    return measured[0]


def wait(job: TrainingJob, timeout: float = 600) -> None:
    """Block until the job ends (for tests and scripts)."""
    deadline = time.time() + timeout
    while job.active and time.time() < deadline:
        time.sleep(0.05)
