"""Hostile files: what a student can upload on the train page, and what a models folder can hold.

Nothing a user can send takes a server down: every hostile upload and folder below is refused with a message (a
CheckpointError, or a listing reason), no other exception escapes, nothing is built from a config that was not
checked, and the process's peak memory stays within a small bound while they are tried. The loops count their
inputs (docs/security.md).
"""
import json
import math
import re
import shutil
import struct
from pathlib import Path

import pytest
import streamlit as st

from model import checkpoint
from model.checkpoint import CheckpointError, load_checkpoint_bytes
from tests.app_links import open_page, shipped_checkpoint_upload
from ui.train import view as train_view

PEAK_GROWTH_LIMIT_MB = 150  # the shipped checkpoint is 2 MB; one refused input may cost a copy or two of that


def peak_rss_mb() -> float | None:
    """The process's peak resident memory since the last reset_peak_rss(), or None where Linux does not say."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(match.group(1)) / 1024 if match else None


def reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # Linux: reset the peak (VmHWM) to the current RSS
        return True
    except OSError:
        return False


def current_rss_mb() -> float:
    return int(re.search(r"VmRSS:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) / 1024


@pytest.fixture(scope="module")
def shipped():
    weights, sidecar = shipped_checkpoint_upload()
    return weights, json.loads(sidecar)


def sidecar_bytes(meta: dict, **config) -> bytes:
    return json.dumps({**meta, "config": {**meta["config"], **config}}).encode()


def repack(header: dict, data: bytes) -> bytes:
    """A safetensors file from a header table and the bytes after it."""
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def split(weights: bytes) -> tuple[dict, bytes]:
    (length,) = struct.unpack("<Q", weights[:8])
    return json.loads(weights[8:8 + length]), weights[8 + length:]


SHAPE_FIELDS = ("family", "src_vocab_size", "tgt_vocab_size", "num_layers", "d_model", "num_heads", "d_ff", "max_len")


class NothingBuilt:
    """Stands in for model.checkpoint.build_model: fails the test if a model is built whose shape differs from the
    shipped one's (an upload asking for another size must be refused before its modules exist)."""

    def __init__(self, allowed: dict):
        self.allowed, self.real = {k: allowed[k] for k in SHAPE_FIELDS}, checkpoint.build_model

    def __call__(self, config):
        shape = {k: config.to_dict().get(k) for k in SHAPE_FIELDS}
        assert shape == self.allowed, f"built a model from an unchecked config: {config}"
        return self.real(config)


# ------------------------------------------------------------------------------ reproductions (the brief's items)

def test_a_config_asking_for_a_huge_model_is_refused_before_anything_is_built(shipped, monkeypatch):
    """A 396-byte JSON with d_model=4096, d_ff=16384 grew a replica from 809 MB to 4.4 GB before it was refused."""
    weights, meta = shipped
    monkeypatch.setattr(checkpoint, "build_model", NothingBuilt(meta["config"]))
    for shape in ({"d_model": 4096, "d_ff": 16384}, {"num_layers": 12, "d_model": 8192}):
        with pytest.raises(CheckpointError) as error:
            load_checkpoint_bytes(weights, sidecar_bytes(meta, **shape), name="big")
        message = str(error.value)
        assert "50,000,000" in message and re.search(r"\d{1,3}(,\d{3}){2,} parameters", message), message


def test_weights_that_do_not_fit_are_refused_from_the_header_naming_the_first_bad_key(shipped, monkeypatch):
    weights, meta = shipped
    header, data = split(weights)
    first = min(k for k in header if k != "__metadata__")
    tensors_read = []
    monkeypatch.setattr(checkpoint, "load_safetensors_bytes", lambda data: tensors_read.append(1))
    renamed = {("renamed." + k if k == first else k): v for k, v in header.items()}
    f16 = {**header, first: {**header[first], "dtype": "F16",
                             "data_offsets": [header[first]["data_offsets"][0],
                                              header[first]["data_offsets"][0]
                                              + (header[first]["data_offsets"][1] - header[first]["data_offsets"][0]) // 2]}}
    bias = next(k for k in header if k.endswith("generator.bias"))
    reshaped = {**header, bias: {**header[bias], "shape": [1, header[bias]["shape"][0]]}}
    for table, expected in ((renamed, f"'renamed.{first}'"), (f16, f"'{first}' is F16"),
                            (reshaped, f"'{bias}' has shape")):
        with pytest.raises(CheckpointError, match=re.escape(expected)):
            load_checkpoint_bytes(repack(table, data), json.dumps(meta).encode(), name="m")
    dropped = {k: v for k, v in header.items() if k != bias}
    with pytest.raises(CheckpointError, match=re.escape(f"'{bias}' is missing")):
        load_checkpoint_bytes(repack(dropped, data), json.dumps(meta).encode(), name="m")
    assert not tensors_read, "tensors were read from a file whose header does not fit"


@pytest.mark.parametrize("case", ["truncated", "not json", "json list", "huge header length", "header longer than file",
                                  "deep json", "4301-digit number"])
def test_a_broken_file_gets_a_clear_message_not_a_traceback(shipped, monkeypatch, case):
    weights, meta = shipped
    monkeypatch.setattr(st, "session_state", {})
    sidecar = json.dumps(meta).encode()
    files = {"truncated": (weights[:100], sidecar), "not json": (weights, b"\x89PNG not json"),
             "json list": (weights, b"[1, 2]"),
             "huge header length": (struct.pack("<Q", 2**63) + weights[8:], sidecar),
             "header longer than file": (struct.pack("<Q", len(weights)) + weights[8:], sidecar),
             "deep json": (weights, b"[" * 100_000 + b"]" * 100_000),
             "4301-digit number": (weights, b'{"format_version": 1' + b"0" * 4301 + b"}")}[case]
    with pytest.raises(CheckpointError) as error:
        train_view.load_upload([("m.safetensors", files[0]), ("m.json", files[1])])
    assert str(error.value).strip() and "Traceback" not in str(error.value)


def test_one_file_that_arrives_alone_is_named_with_the_missing_one_and_the_limit(shipped, monkeypatch):
    from i18n import translate

    weights, meta = shipped
    monkeypatch.setattr(st, "session_state", {})
    with pytest.raises(CheckpointError) as error:
        train_view.load_upload([("mine.safetensors", weights)])
    assert str(error.value) == translate("en", "train.upload_missing_config", present="mine.safetensors", limit=64)
    with pytest.raises(CheckpointError, match=r"only mine\.json arrived: the weights file .* 64 MiB upload limit"):
        train_view.load_upload([("mine.json", json.dumps(meta).encode())])
    with pytest.raises(CheckpointError, match=r"notes\.txt is neither"):
        train_view.load_upload([("mine.safetensors", weights), ("notes.txt", b"hello")])
    with pytest.raises(CheckpointError, match=r"m\.json: 64\.0 MiB is over the 64 MiB limit"):
        train_view.load_upload([("m.safetensors", weights), ("m.json", b" " * (64 * 2**20 + 1))])


def test_the_upload_limit_in_messages_is_the_servers_own():
    import tomllib

    configured = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert configured["server"]["maxUploadSize"] == checkpoint.MAX_CHECKPOINT_BYTES // 2**20


def test_a_missing_file_is_named_on_the_page():
    weights, _ = shipped_checkpoint_upload()
    at = open_page("train")
    at.file_uploader(key="upload_files").set_value([("mine.safetensors", weights, "application/octet-stream")]).run()
    at.button(key="upload_load").click().run()
    assert not at.exception
    shown = re.sub(r"\\(.)", r"\1", " ".join(e.value for e in at.error))  # markdown escapes taken out
    assert "mine.safetensors" in shown and "NAME.json" in shown and "64 MiB upload limit" in shown, shown


# ----------------------------------------------------------------------------------- the operator's switch

def test_the_operator_turns_uploads_off_by_environment_or_settings_file(monkeypatch, tmp_path):
    from model import local_models
    from ui.train.upload_policy import ENV_VAR, uploads_allowed

    settings = tmp_path / "attention_lab.toml"
    monkeypatch.setattr(local_models, "CONFIG_FILE", settings)
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert uploads_allowed()  # no file, no variable: on
    settings.write_text('[models]\nfolder = "x"\n\n[uploads]\nenabled = false\n')
    assert not uploads_allowed()
    monkeypatch.setenv(ENV_VAR, "on")
    assert uploads_allowed()  # the environment wins, as for the models folder
    settings.write_text("[uploads]\nenabled = true\n")
    for value, allowed in (("off", False), ("OFF", False), ("0", False), ("of", False), ("on", True), ("1", True)):
        monkeypatch.setenv(ENV_VAR, value)
        assert uploads_allowed() is allowed, value
    monkeypatch.delenv(ENV_VAR)
    settings.write_text('[uploads]\nenabled = "no"\n')
    assert not uploads_allowed()  # a value that is not true does not open uploads
    settings.write_text("[uploads\nbroken")
    assert uploads_allowed()


def test_with_uploads_off_the_page_hides_the_uploader_and_says_why(monkeypatch):
    from i18n import translate
    from ui.train.upload_policy import ENV_VAR

    monkeypatch.setenv(ENV_VAR, "off")
    at = open_page("train")
    assert not at.get("file_uploader")
    assert translate("en", "train.uploads_off") in [i.value for i in at.info]
    weights, sidecar = shipped_checkpoint_upload()
    monkeypatch.setattr(st, "session_state", {})
    with pytest.raises(CheckpointError, match="turned off"):  # a request that skips the page is refused too
        train_view.load_upload([("m.safetensors", weights), ("m.json", sidecar)])


# ------------------------------------------------------------------------------------ the hostile upload loop

HOSTILE_VALUES = [0, -1, True, False, 1.5, float("nan"), float("inf"), 1e308, "7", None, [], {}, 10**9, 2**64]


def hostile_uploads(weights: bytes, meta: dict, seq2seq_meta: dict) -> list[tuple[str, list[tuple[str, bytes]]]]:
    """(label, files) for every hostile upload tried: configs, sidecars and safetensors files."""
    sidecar = json.dumps(meta).encode()
    cases = []

    def add(label, weights_bytes=weights, sidecar_bytes_=sidecar):
        cases.append((label, [("m.safetensors", weights_bytes), ("m.json", sidecar_bytes_)]))

    for base in (meta, seq2seq_meta):  # every config field of both families, every hostile value
        for field_name in base["config"]:
            if field_name == "family":
                continue
            for value in HOSTILE_VALUES:
                if value == base["config"][field_name] and type(value) is type(base["config"][field_name]) \
                        or (field_name, value) == ("dropout", 0):  # values a real checkpoint may have
                    continue
                add(f"{base['config']['family']}.{field_name}={value!r}", sidecar_bytes_=sidecar_bytes(base, **{field_name: value}))
            add(f"{field_name}=4301 digits", sidecar_bytes_=sidecar_bytes(base, **{field_name: "DIGITS"})
                .replace(b'"DIGITS"', b"1" * 4301))
    for shape in ({"d_model": 4096, "d_ff": 16384}, {"num_layers": 12, "d_model": 8192}, {"d_model": 8192, "d_ff": 8192},
                  {"src_vocab_size": 100_000, "tgt_vocab_size": 100_000}, {"max_len": 10**9}, {"num_heads": 3},
                  {"num_layers": 10**6, "d_model": 4, "num_heads": 1, "d_ff": 4}, {"tie_embeddings": True},
                  {"positional": "learned"}, {"norm_first": True}, {"family": "seq2seq"}, {"family": "llama"},
                  {"family": None}, {"extra_field": 1}, {"pad_id": 24}):
        add(f"config {shape}", sidecar_bytes_=sidecar_bytes(meta, **shape))
    for label, value in (("config missing", None), ("config a list", [1]), ("config a string", "x")):
        add(label, sidecar_bytes_=json.dumps({**meta, "config": value}).encode())
    for part, values in (("src_vocab", [None, "abc", [1, 2, 3], meta["src_vocab"][:-1], meta["src_vocab"] + ["x"],
                                       meta["src_vocab"][4:], [[]] * 24]),
                         ("task", [None, ["x"], "translate", 7]), ("metrics", [[], "x"]), ("meta", [[], 1]),
                         ("format_version", [True, "1", 1.0, 2, None])):
        for value in values:
            add(f"{part}={str(value)[:30]}", sidecar_bytes_=json.dumps({**meta, part: value}).encode())
    add("meta.train_config a list", sidecar_bytes_=json.dumps({**meta, "meta": {"train_config": []}}).encode())
    for label, text in (("empty json", b""), ("json null", b"null"), ("json list", b"[]"), ("json string", b'"x"'),
                        ("json number", b"1"), ("not utf-8", b"\xff\xfe{}"), ("half an object", b'{"format'),
                        ("deep nesting", b"[" * 200_000 + b"]" * 200_000), ("NaN only", b"NaN"),
                        ("pickle", b"\x80\x04\x95}")):
        add(f"sidecar {label}", sidecar_bytes_=text)

    header, data = split(weights)
    names = sorted(k for k in header if k != "__metadata__")
    first = names[0]
    entry = header[first]
    begin, end = entry["data_offsets"]
    oblong = next(k for k in names if len(header[k]["shape"]) == 2 and len(set(header[k]["shape"])) == 2)
    variants = {
        "empty": b"", "7 bytes": b"\0" * 7, "length 2**64-1": b"\xff" * 8 + weights[8:],
        "length past the end": struct.pack("<Q", len(weights)) + weights[8:],
        "length 16 MiB + 1": struct.pack("<Q", 16 * 2**20 + 1) + weights[8:],
        "header not json": struct.pack("<Q", 5) + b"{oops" + data, "header a list": repack([1], data),  # type: ignore[arg-type]
        "header a string": struct.pack("<Q", 3) + b'"x"' + data, "header not utf-8": struct.pack("<Q", 2) + b"\xff\xfe",
        "pickle": b"\x80\x04\x95" + b"\0" * 100, "zip": b"PK\x03\x04" + b"\0" * 100,
        "no tensors": repack({}, b""), "metadata only": repack({"__metadata__": {"a": "b"}}, b""),
        "all zeros": b"\0" * 4096,
    }
    for cut in (8, 9, 50, len(weights) // 3, len(weights) - 1):
        variants[f"truncated at {cut}"] = weights[:cut]
    tables = {
        "dtype unknown": {**header, first: {**entry, "dtype": "F128"}},
        "dtype F64": {**header, first: {**entry, "dtype": "F64", "shape": [*entry["shape"][:-1], entry["shape"][-1] // 2]}},
        "dtype I32": {**header, first: {**entry, "dtype": "I32"}},
        "shape negative": {**header, first: {**entry, "shape": [-1, *entry["shape"][1:]]}},
        "shape of bools": {**header, first: {**entry, "shape": [True] * len(entry["shape"])}},
        "shape huge": {**header, first: {**entry, "shape": [2**40, 2**40]}},
        "shape a string": {**header, first: {**entry, "shape": "big"}},
        "offsets past the end": {**header, first: {**entry, "data_offsets": [begin, len(data) + 10**9]}},
        "offsets reversed": {**header, first: {**entry, "data_offsets": [end, begin]}},
        "offsets missing": {**header, first: {"dtype": "F32", "shape": entry["shape"]}},
        "entry a list": {**header, first: [1, 2]},
        "key renamed": {**{k: v for k, v in header.items() if k != first}, "x" + first: entry},
        "key dropped": {k: v for k, v in header.items() if k != names[-1]},
        "extra key": {**header, "extra.weight": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}},
        "shape swapped": {**header, oblong: {**header[oblong], "shape": list(reversed(header[oblong]["shape"]))}},
    }
    for label, table in tables.items():
        variants[label] = repack(table, data)
    nan = bytearray(data)
    nan[begin:begin + 4] = struct.pack("<f", math.nan)
    variants["a NaN weight"] = repack(header, bytes(nan))
    inf = bytearray(data)
    inf[end - 4:end] = struct.pack("<f", -math.inf)
    variants["an infinite weight"] = repack(header, bytes(inf))
    for label, content in variants.items():
        add(f"weights {label}", weights_bytes=content)
    return cases


def test_every_hostile_upload_is_refused_with_a_message_and_nothing_else(shipped, monkeypatch, capsys):
    from tests.app_links import shipped_checkpoint_upload as _  # noqa: F401 -- same source as `shipped`
    from ui.models import CHECKPOINT_DIR

    weights, meta = shipped
    seq2seq_meta = json.loads((CHECKPOINT_DIR / "bahdanau_en-fr.json").read_text())
    cases = hostile_uploads(weights, meta, seq2seq_meta)
    monkeypatch.setattr(st, "session_state", {})
    built = NothingBuilt(meta["config"])
    monkeypatch.setattr(checkpoint, "build_model", built)
    train_view.load_upload([("m.safetensors", weights), ("m.json", json.dumps(meta).encode())])  # warm: the good one
    measured = reset_peak_rss()
    start = current_rss_mb()
    failures = []
    for label, files in cases:
        try:
            train_view.load_upload(files)
        except CheckpointError as error:
            if not str(error).strip():
                failures.append(f"{label}: empty message")
        except Exception as error:  # noqa: BLE001 -- what the loop looks for: anything but a clear refusal
            failures.append(f"{label}: {type(error).__name__}: {str(error)[:200]}")
        else:
            failures.append(f"{label}: loaded")
    growth = (peak_rss_mb() - start) if measured and peak_rss_mb() is not None else 0.0
    with capsys.disabled():
        print(f"\n{len(cases)} hostile uploads tried, {len(failures)} failures, peak memory +{growth:.0f} MB")
    assert len(cases) >= 300
    assert not failures, failures[:10]
    assert growth < PEAK_GROWTH_LIMIT_MB


# ------------------------------------------------------------------------------------------ the models folder

@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from tests.tiny_models import build_models_folder

    return build_models_folder(tmp_path_factory.mktemp("hf-models"))


def _copy(tiny_folder: Path, root: Path, source: str, name: str) -> Path:
    target = root / "models" / name
    shutil.copytree(tiny_folder / source, target, symlinks=True)
    return target


def _edit_config(folder: Path, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))


def _index(folder: Path, *targets: str, rename_weights_to: str | None = None) -> None:
    """Write model.safetensors.index.json mapping the weights' tensors to targets (model.safetensors renamed)."""
    if rename_weights_to:
        (folder / "model.safetensors").rename(folder / rename_weights_to)
    header, _ = split(next(folder.glob("*.safetensors")).read_bytes())
    keys = [k for k in header if k != "__metadata__"]
    weight_map = {key: targets[i % len(targets)] for i, key in enumerate(keys)}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))


def hostile_folders(tiny_folder: Path, root: Path) -> dict[str, str]:
    """Write every hostile model folder under root/models; returns name -> a word its listed reason must hold."""
    outside = root / "outside"
    outside.mkdir()
    shutil.copy(tiny_folder / "tiny-gpt2" / "model.safetensors", outside / "x.safetensors")
    expected = {}

    def make(name, source, word, **config):
        folder = _copy(tiny_folder, root, source, name)
        if config:
            _edit_config(folder, **config)
        expected[name] = word
        return folder

    # the brief's cases
    folder = make("decoy-index-to-pickle", "tiny-gpt2", "pickle")
    _index(folder, "pytorch_model.bin", rename_weights_to="decoy.safetensors")
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    expected[folder.name] = "not a .safetensors file"
    folder = make("index-outside", "tiny-gpt2", "outside the model's folder")
    _index(folder, "../../outside/x.safetensors", rename_weights_to="decoy.safetensors")
    folder = make("index-link-outside", "tiny-gpt2", "outside")
    (folder / "model.safetensors").rename(folder / "decoy.safetensors")
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.safetensors").symlink_to(outside / "x.safetensors")
    _index(folder, "sub/inner.safetensors")
    make("billion-layers", "tiny-gpt2", "n_layer", n_layer=10**9)
    make("zero-heads", "tiny-bert", "num_attention_heads", num_attention_heads=0)
    folder = make("bad-tokenizer", "tiny-gpt2", "tokenizer")
    (folder / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "Nonsense"}}')
    # indexes
    for label, text in (("index-not-json", "{oops"), ("index-a-list", "[1]"), ("index-no-map", "{}"),
                        ("index-map-of-numbers", '{"weight_map": {"a": 1}}'),
                        ("index-deep", "[" * 100_000 + "]" * 100_000)):
        folder = make(label, "tiny-gpt2", "index")
        (folder / "model.safetensors").rename(folder / "decoy.safetensors")
        (folder / "model.safetensors.index.json").write_text(text)
    folder = make("index-missing-file", "tiny-gpt2", "not in the folder")
    _index(folder, "model-00001-of-00002.safetensors", rename_weights_to="decoy.safetensors")
    folder = make("index-absolute-path", "tiny-gpt2", "outside")
    _index(folder, str(outside / "x.safetensors"), rename_weights_to="decoy.safetensors")
    folder = make("index-nul-byte", "tiny-gpt2", "index")
    _index(folder, "a\x00.safetensors", rename_weights_to="decoy.safetensors")
    folder = make("only-a-decoy", "tiny-gpt2", "model.safetensors")
    (folder / "model.safetensors").rename(folder / "decoy.safetensors")
    folder = make("bert-sharded", "tiny-bert", "sharded")
    _index(folder, "model-1.safetensors", rename_weights_to="model-1.safetensors")
    # config fields of every kind and size
    for field_name, source in (("n_layer", "tiny-gpt2"), ("n_head", "tiny-gpt2"), ("n_embd", "tiny-gpt2"),
                               ("vocab_size", "tiny-gpt2"), ("num_hidden_layers", "tiny-bert"),
                               ("hidden_size", "tiny-bert"), ("intermediate_size", "tiny-bert"),
                               ("encoder_layers", "tiny-bart"), ("d_model", "tiny-bart"),
                               ("decoder_attention_heads", "tiny-bart")):
        for i, value in enumerate((0, -1, True, 2.5, "8", [], 10**12, 2**64)):
            make(f"{field_name}-{i}", source, field_name, **{field_name: value})
    make("heads-do-not-divide", "tiny-bert", "must divide", num_attention_heads=3)
    make("max-positions-huge", "tiny-gpt2", "n_positions", n_positions=10**9)
    make("layers-more-than-weights", "tiny-gpt2", "do not belong together", n_layer=200)
    make("model-type-null", "tiny-gpt2", "not supported", model_type=None)
    make("model-type-list", "tiny-gpt2", "not supported", model_type=["gpt2"])
    # config files that are not configs
    for label, text in (("config-a-list", "[1]"), ("config-not-json", "{oops"), ("config-deep", "[" * 100_000),
                        ("config-no-type", "{}"), ("config-huge", " " * (2**20 + 1) + "{}")):
        folder = make(label, "tiny-gpt2", "config.json")
        (folder / "config.json").write_text(text)
    # weights files
    for label, mangle in (("weights-empty", lambda b: b""), ("weights-7-bytes", lambda b: b[:7]),
                          ("weights-header-huge", lambda b: b"\xff" * 8 + b[8:]),
                          ("weights-header-past-end", lambda b: struct.pack("<Q", len(b)) + b[8:]),
                          ("weights-header-not-json", lambda b: struct.pack("<Q", 4) + b"oops" + b[12:]),
                          ("weights-truncated", lambda b: b[: len(b) - 10]),
                          ("weights-pickle", lambda b: b"\x80\x04\x95" + b"\0" * 64)):
        folder = make(label, "tiny-gpt2", "safetensors")
        (folder / "model.safetensors").write_bytes(mangle((folder / "model.safetensors").read_bytes()))
    # tokenizers
    for label, text in (("tokenizer-empty", ""), ("tokenizer-list", "[]"), ("tokenizer-not-json", "{oops"),
                        ("tokenizer-deep", "[" * 100_000), ("tokenizer-not-utf8", "\udcff")):
        folder = make(label, "tiny-gpt2", "tokenizer")
        (folder / "tokenizer.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    folder = make("tokenizer-missing", "tiny-gpt2", "tokenizer.json")
    (folder / "tokenizer.json").unlink()
    return expected


def test_every_hostile_model_folder_is_listed_with_its_reason_and_never_opened(tiny_folder, tmp_path, monkeypatch,
                                                                              capsys):
    from model import local_models
    from model.local_models import list_local_models, open_local_model

    expected = hostile_folders(tiny_folder, tmp_path)
    opened = []
    monkeypatch.setattr(local_models, "_open_with_transformers", lambda entry: opened.append(entry.name))
    monkeypatch.setattr(local_models, "load_bert_folder", lambda path, name: opened.append(name))
    list_local_models(tiny_folder)  # warm: imports (tokenizers) are not the inputs' cost
    measured = reset_peak_rss()
    start = current_rss_mb()
    entries = {e.name: e for e in list_local_models(tmp_path / "models")}
    failures = [f"{name}: not listed" for name in expected if name not in entries]
    for name, word in expected.items():
        entry = entries.get(name)
        if entry is None:
            continue
        if entry.usable:
            failures.append(f"{name}: listed as usable")
        elif word.lower() not in entry.reason.lower():
            failures.append(f"{name}: reason {entry.reason!r} does not say {word!r}")
        try:
            open_local_model(entry)
        except CheckpointError as error:
            assert str(error).strip()
        except Exception as error:  # noqa: BLE001 -- anything but a clear refusal is a failure
            failures.append(f"{name}: {type(error).__name__} on opening: {error}")
    growth = (peak_rss_mb() - start) if measured and peak_rss_mb() is not None else 0.0
    with capsys.disabled():
        print(f"\n{len(expected)} hostile model folders tried, {len(failures)} failures, peak memory "
              f"+{growth:.0f} MB")
    assert len(expected) >= 100
    assert not failures, failures[:10]
    assert not opened
    assert growth < PEAK_GROWTH_LIMIT_MB


def test_the_tiny_models_stay_usable_and_the_sidebar_lists_hostile_ones_with_reasons(tiny_folder, tmp_path,
                                                                                   monkeypatch):
    from model.local_models import ENV_VAR, list_local_models

    entries = {e.name: e for e in list_local_models(tiny_folder)}
    assert all(entries[name].usable for name in ("tiny-bert", "tiny-gpt2", "tiny-bart")), entries
    models = tmp_path / "models"
    _copy(tiny_folder, tmp_path, "tiny-gpt2", "tiny-gpt2")
    folder = _copy(tiny_folder, tmp_path, "tiny-gpt2", "billion-layers")
    _edit_config(folder, n_layer=10**9)
    folder = _copy(tiny_folder, tmp_path, "tiny-gpt2", "decoy")
    _index(folder, "pytorch_model.bin", rename_weights_to="decoy.safetensors")
    monkeypatch.setenv(ENV_VAR, str(models))
    at = open_page("home")
    assert "tiny-gpt2" in at.selectbox(key="model_id").options
    assert "billion-layers" not in at.selectbox(key="model_id").options
    reasons = " ".join(t.value for t in at.sidebar.text)
    assert "billion-layers: config.json: n_layer must be a whole number" in reasons, reasons
    assert "decoy: model.safetensors.index.json names 'pytorch_model.bin', which is not a .safetensors file" \
        in reasons, reasons
