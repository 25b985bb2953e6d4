"""Training in the browser: one background job per session, bounded server-wide, stoppable.

The trainings of a process wait in a fair queue (runtime/fair_queue.py): at most MAX_CONCURRENT_TRAININGS run at once,
one per session, the sessions served in turns and a waiting student told her place; each run stops at
TRAINING_SECONDS (the model so far is kept), and the teacher can stop every training of the replica, or the longest
(stop_trainings, from the Teacher page).

The job runs model.train.train() in a thread so the page stays responsive; the page polls the job
(plain Python state, no Streamlit calls from the thread) with a fragment that reruns every second.
The thread has no browser session, so it records how the job ended as a message id with values
(job.message_key, job.message_values) and the page words it in the reader's language when it draws.
"""
from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from i18n import DEFAULT_LANGUAGE, translate
from model.checkpoint import LoadedModel
from model.data import Dataset
from model.decode import greedy_decode
from model.families import adapt, trains_attention
from model.sources import between_sequences
from model.train import StepInfo, TrainConfig, TrainResult, make_training_data, train
from model.training_speed import TrainingSpeed, measure_training_speed
from runtime.fair_queue import FairQueue, Job

# At most this many trainings run at once on the server; each uses one torch thread, so forward passes of
# other students still find a free core.
MAX_CONCURRENT_TRAININGS = max(1, (os.cpu_count() or 2) - 1)
# A run stops after this many seconds of training (ATTENTION_LAB_TRAINING_SECONDS to change): a 3000-step run of the
# largest model the form offers would otherwise hold a slot for a good part of a lesson.
TRAINING_SECONDS = float(os.environ.get("ATTENTION_LAB_TRAINING_SECONDS", "600"))
TRAININGS = FairQueue("training", workers=MAX_CONCURRENT_TRAININGS,
                      thread_setup=lambda: torch.set_num_threads(1))  # one core per training; the rest serve pages
_active: dict[str, TrainingJob] = {}  # model id -> a job of this process waiting or running
_active_lock = threading.Lock()
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
    session: str = ""  # the browser session that started it
    stopped_by: str = ""  # "time_limit" or "teacher" when the run was stopped for the class
    queued: Job | None = None  # its place in the process's training queue
    finished: threading.Event = field(default_factory=threading.Event)  # set when its work is done and freed
    checkpoint_files: tuple[bytes, bytes] | None = None  # (safetensors, JSON) for download, made once
    thread: threading.Thread | None = None

    @property
    def active(self) -> bool:
        return self.state in ("waiting", "running")

    @property
    def place(self) -> int:
        """0 once it runs; else its place among the trainings waiting for a slot (1: next)."""
        return TRAININGS.place(self.queued) if self.queued is not None and self.state == "waiting" else 0

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
    maps = between_sequences(result)  # cross-attention heads (L, h, T, S), or the GRU's one alignment (1, 1, T, S)
    output_tokens = result.output_tokens
    if maps is None:
        # No attention between two sequences: one causal map over the whole sequence (a decoder-only translator's
        # "<bos> english ⟶ french"), (L, h, N, N) with its own tokens on both axes, as its adapter analyses it.
        analysed = adapt("snapshot", loaded).analyse(example)
        (maps,) = analysed.maps.values()
        output_tokens = analysed.output_tokens
    model.train(was_training)
    return Snapshot(step, output_tokens, maps.key_tokens, maps.query_tokens, maps.weights)


def start_job(config: TrainConfig, example: str, data: Dataset | None = None,
              session_alive: Callable[[], bool] = lambda: True, session: str = "") -> TrainingJob:
    """Queue the training for the process's training workers; returns at once. A session has one training at a
    time: a run of hers still waiting is replaced, a running one runs first (runtime/fair_queue.py).

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
        if info.elapsed_s > TRAINING_SECONDS and not job.stop_requested.is_set():
            job.stopped_by = "time_limit"
            job.stop_requested.set()
        return job.stop_requested.is_set()

    model_ref: list = [None]
    dataset = data

    def run() -> None:
        nonlocal dataset
        if job.stop_requested.is_set():
            job.end("stopped", "job_teacher_stopped" if job.stopped_by == "teacher" else "job_not_started", steps=0,
                    seconds="0.0")
            _forget(job)
            return
        job.state = "running"
        try:
            dataset = dataset or make_training_data(config)
            result = train(config, data=dataset, on_step=on_step, on_model=lambda m: model_ref.__setitem__(0, m))
            job.result = result
            if result.reason.startswith("nonfinite"):
                job.end("failed", f"job_{result.reason}", step=len(result.history) + 1)
            else:
                reason = "session_closed" if job.session_closed else result.reason
                if reason == "user" and job.stopped_by:
                    reason = {"teacher": "teacher_stopped", "time_limit": "time_limit"}[job.stopped_by]
                job.end("finished" if reason == "finished" else "stopped", f"job_{reason}",
                        steps=len(result.history), seconds=f"{result.seconds:.1f}")
        except Exception as error:  # shown to the user as a message, never a traceback
            job.end("failed", "job_error", error=str(error))
        finally:  # optimiser state, gradients, activations and the data are garbage now: return their pages
            from model.memory import return_freed_memory

            model_ref[0], dataset = None, None
            return_freed_memory()
            _forget(job)

    job.session = session or job.model_id
    with _active_lock:
        replaced = [old for old in _active.values() if old.session == job.session and old.state == "waiting"]
        _active[job.model_id] = job
    job.queued = TRAININGS.submit(job.session, job.model_id, run)  # her run still waiting is cancelled ...
    for old in replaced:  # ... and ends, saying so
        old.end("stopped", "job_not_started")
        _forget(old)
    return job


def _forget(job: TrainingJob) -> None:
    with _active_lock:
        _active.pop(job.model_id, None)
    job.queued = None  # the queue's record holds this function, which holds the job: let the session free both
    job.finished.set()


def active_trainings() -> list[TrainingJob]:
    """This process's trainings waiting or running, the longest-running first."""
    with _active_lock:
        jobs = list(_active.values())
    return sorted(jobs, key=lambda job: (job.state != "running", -job.elapsed_s))


def stop_trainings(longest_only: bool = False) -> int:
    """The teacher stops every training of this process (waiting ones never start), or the one running longest;
    each student is told the teacher stopped it, and keeps the model trained so far. -> how many were stopped."""
    jobs = [job for job in active_trainings() if not job.stop_requested.is_set()]
    if longest_only:
        jobs = [job for job in jobs if job.state == "running"][:1]
    for job in jobs:
        job.stopped_by = "teacher"
        job.stop_requested.set()
        if job.queued is not None and TRAININGS.cancel(job.queued):  # still waiting: it never starts
            job.end("stopped", "job_teacher_stopped", steps=0, seconds="0.0")
            _forget(job)
    return len(jobs)


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
    """Block until the job has ended and is freed (for tests and scripts): its state says it is over before its
    thread has returned its memory and left active_trainings(), so the state alone would return too early."""
    job.finished.wait(timeout)
