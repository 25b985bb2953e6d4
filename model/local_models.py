"""Hugging Face models the teacher already has, in one server-side folder (never typed by a student).

The folder comes from the ATTENTION_LAB_MODELS environment variable or, without it, from
.streamlit/attention_lab.toml:

    [models]
    folder = "/srv/hf-models"    # relative paths are relative to the app's folder

Every subfolder holding config.json and *.safetensors weights (never a pickle) and tokenizer.json is an entry.
BERT configs run in our own encoder (model/bert.py: every feature); other architectures run through `transformers`
(imported only when such a model is opened) with eager attention and output_attentions=True. An entry that cannot
be used keeps a one-line reason; an optional `sha256` file (sha256sum format) pins the weights, and a mismatch is
refused. Nothing outside the folder is read: entries whose real path leaves it (symlinks) are refused, and so is a
model.safetensors.index.json that names a file outside the model's folder or anything but a .safetensors file.
Before anything is built, the listing checks config.json's shape fields and estimated size (model/hf_config.py)
against MAX_LOCAL_PARAMETERS and the safetensors headers, and parses tokenizer.json.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from model.bert import BERT_MODEL_TYPES, MAX_TOKENS, PretrainedEncoder, load_bert_folder
from model.checkpoint import CheckpointError
from model.hf_config import estimate_parameters
from model.safetensors_header import HeaderError, header_of_file

ENV_VAR = "ATTENTION_LAB_MODELS"
CONFIG_FILE = Path(__file__).resolve().parents[1] / ".streamlit" / "attention_lab.toml"
# model_type values known to load with AutoModel / AutoModelForSeq2SeqLM and to return attentions in eager mode.
TRANSFORMERS_TYPES = frozenset({"gpt2", "gpt_neo", "opt", "distilbert", "roberta", "xlm-roberta", "electra",
                                "albert", "bart", "mbart", "marian", "t5", "pegasus"})
MAX_NEW_TOKENS = 64  # greedy generation of encoder-decoder models stops here at the latest
# The largest model listed: 6 GB of float32 weights, what one replica of the classroom server can hold next to the
# shipped models. Counted from config.json and from the safetensors headers before transformers builds anything.
MAX_LOCAL_PARAMETERS = 1_500_000_000
SINGLE_FILE, INDEX_FILE = "model.safetensors", "model.safetensors.index.json"
MAX_CONFIG_BYTES = 2**20  # a config.json is a few kB
MAX_INDEX_BYTES = 16 * 2**20  # an index names each tensor once: ~100 bytes each
MAX_TOKENIZER_BYTES = 100 * 2**20  # the largest common tokenizer.json files are ~20 MB


@dataclass(frozen=True)
class LocalModelEntry:
    name: str  # the subfolder's name: the model's id in the app
    path: Path
    model_type: str | None
    reason: str | None = None  # why it cannot be used; None when it can

    @property
    def usable(self) -> bool:
        return self.reason is None

    @property
    def runs_in_our_encoder(self) -> bool:
        return self.model_type in BERT_MODEL_TYPES


def models_folder() -> Path | None:
    """The configured models folder, or None when none is configured."""
    configured = os.environ.get(ENV_VAR)
    if not configured and CONFIG_FILE.is_file():
        try:
            configured = tomllib.loads(CONFIG_FILE.read_text(encoding="utf-8")).get("models", {}).get("folder")
        except (OSError, tomllib.TOMLDecodeError):
            configured = None
    if not configured:
        return None
    folder = Path(configured)
    return folder if folder.is_absolute() else CONFIG_FILE.parents[1] / folder


def _weight_files(path: Path) -> list[Path]:
    """The safetensors files transformers (or our encoder) will read: model.safetensors, else every file that
    model.safetensors.index.json names. ValueError when the index names anything but a .safetensors file inside
    this model's folder (symlinks resolved): transformers would open a pickle, or a file elsewhere, it names."""
    folder, index = path.resolve(), path / INDEX_FILE
    files = []
    if index.is_file():
        if index.stat().st_size > MAX_INDEX_BYTES:
            raise ValueError(f"{INDEX_FILE} is over {MAX_INDEX_BYTES // 2**20} MiB: not read")
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError) as error:
            raise ValueError(f"{INDEX_FILE} is not an index of weights ({str(error)[:80]})") from None
        if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
            raise ValueError(f"{INDEX_FILE}: weight_map is not a table of file names")
        for target in sorted(set(weight_map.values())):
            try:
                resolved = (path / target).resolve()
            except (ValueError, OSError):  # a NUL byte, a name too long, a loop of links
                raise ValueError(f"{INDEX_FILE} names {target[:80]!r}, which is not a usable file name") from None
            if not resolved.is_relative_to(folder):
                raise ValueError(f"{INDEX_FILE} names {target[:80]!r}, outside the model's folder: not read")
            if resolved.suffix != ".safetensors":
                raise ValueError(f"{INDEX_FILE} names {target[:80]!r}, which is not a .safetensors file: never loaded")
            if not resolved.is_file():
                raise ValueError(f"{INDEX_FILE} names {target[:80]!r}, which is not in the folder")
            files.append(resolved)
    if (path / SINGLE_FILE).is_file():  # transformers reads it first when both are there
        return [path / SINGLE_FILE]
    if not files:
        raise ValueError(f"no {SINGLE_FILE} (nor {INDEX_FILE}): the weights transformers loads are missing")
    return files


@functools.lru_cache(maxsize=256)
def _tokenizer_problem(path: str, modified_ns: int, size: int) -> str | None:
    """Why tokenizer.json cannot be used, or None; remembered per file version (a large one is slow to parse)."""
    if size > MAX_TOKENIZER_BYTES:
        return f"tokenizer.json is over {MAX_TOKENIZER_BYTES // 2**20} MiB: not read"
    from tokenizers import Tokenizer

    try:
        Tokenizer.from_file(path)
    except Exception as error:  # noqa: BLE001 -- the tokenizers library raises a bare Exception for a bad file
        return f"tokenizer.json is not a tokenizer the tokenizers library reads ({str(error)[:100]})"
    return None


def _size_problem(config: dict, weight_files: list[Path]) -> str | None:
    """Why the model is too big, or its config.json out of bounds or at odds with its weights; None when fine.

    Checked from config.json and the safetensors headers only: transformers builds every module the config names
    before it reads a weight, so a config that names a billion layers must be refused here."""
    try:
        estimate = estimate_parameters(config)
    except ValueError as error:
        return str(error)
    if estimate > MAX_LOCAL_PARAMETERS:
        return (f"config.json describes about {estimate:,} parameters, over the {MAX_LOCAL_PARAMETERS:,} this "
                "server loads")
    stored = 0
    for file in weight_files:
        try:
            stored += sum(info.numel for info in header_of_file(file).values())
        except (HeaderError, OSError) as error:
            return f"{file.name} is not readable safetensors ({error}); truncated or damaged"
    if stored > MAX_LOCAL_PARAMETERS:
        return f"the weights hold {stored:,} parameters, over the {MAX_LOCAL_PARAMETERS:,} this server loads"
    if estimate > 2 * stored:  # the rest would be built with random weights: a config edited after saving
        return (f"config.json describes about {estimate:,} parameters but the weights hold only {stored:,}: "
                "they do not belong together")
    return None


def _examine(path: Path, root: Path) -> LocalModelEntry:
    name = path.name
    if not path.resolve().is_relative_to(root):
        return LocalModelEntry(name, path, None, "its real path is outside the models folder (a link): not read")
    escaping = [p.name for p in path.iterdir() if not p.resolve().is_relative_to(root)]
    if escaping:  # checked before anything is opened: nothing outside the folder is read
        return LocalModelEntry(name, path, None, f"{', '.join(sorted(escaping))} link(s) outside the models "
                                                 "folder: not read")
    try:
        if (path / "config.json").stat().st_size > MAX_CONFIG_BYTES:
            return LocalModelEntry(name, path, None, f"config.json is over {MAX_CONFIG_BYTES // 2**20} MiB: not read")
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        model_type = str(config["model_type"])
    except FileNotFoundError:
        return LocalModelEntry(name, path, None, "no config.json")
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError) as error:
        return LocalModelEntry(name, path, None, f"config.json is not a Hugging Face config ({str(error)[:100]})")
    if not list(path.glob("*.safetensors")) and not (path / INDEX_FILE).is_file():
        pickles = [p.name for p in path.iterdir() if p.suffix in (".bin", ".pt", ".pth", ".ckpt", ".pkl")]
        why = f"only pickle weights ({', '.join(pickles)}): never loaded, convert them to safetensors" if pickles \
            else "no *.safetensors weights"
        return LocalModelEntry(name, path, model_type, why)
    if model_type not in BERT_MODEL_TYPES and model_type not in TRANSFORMERS_TYPES:
        return LocalModelEntry(name, path, model_type, f"architecture {model_type[:40]!r} is not supported")
    try:
        weight_files = _weight_files(path)
    except (ValueError, OSError) as error:
        return LocalModelEntry(name, path, model_type, str(error))
    if model_type in BERT_MODEL_TYPES and weight_files != [path / SINGLE_FILE]:
        return LocalModelEntry(name, path, model_type, f"a BERT model needs one {SINGLE_FILE} (sharded weights "
                                                       "are not read by our encoder)")
    problem = _size_problem(config, weight_files)
    if problem:
        return LocalModelEntry(name, path, model_type, problem)
    tokenizer = path / "tokenizer.json"
    if not tokenizer.is_file():
        return LocalModelEntry(name, path, model_type, "no tokenizer.json (a fast tokenizer file is needed)")
    stat = tokenizer.stat()
    problem = _tokenizer_problem(str(tokenizer), stat.st_mtime_ns, stat.st_size)
    if problem:
        return LocalModelEntry(name, path, model_type, problem)
    return LocalModelEntry(name, path, model_type)


def list_local_models(folder: Path | None = None, reserved: tuple[str, ...] = ()) -> list[LocalModelEntry]:
    """Every subfolder of the models folder, usable or with its reason; reserved: names already taken."""
    folder = folder or models_folder()
    if folder is None or not folder.is_dir():
        return []
    root = folder.resolve()
    entries = []
    for path in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        entry = _examine(path, root)
        if entry.name in reserved:
            entry = LocalModelEntry(entry.name, path, entry.model_type, "its name is already a shipped model's")
        entries.append(entry)
    return entries


def local_model_entry(name: str, folder: Path | None = None) -> LocalModelEntry | None:
    return next((e for e in list_local_models(folder) if e.name == name and e.usable), None)


def check_pinned_sha256(path: Path) -> None:
    """When the model folder has a `sha256` file, every weights file it names must match; CheckpointError if not."""
    pins = path / "sha256"
    if not pins.is_file():
        return
    for line in pins.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        expected, _, file_name = line.strip().partition("  ")
        file_name = file_name.lstrip("*")
        target = (path / file_name).resolve()
        if not target.is_relative_to(path.resolve()) or not target.is_file():
            raise CheckpointError(f"{path.name}: the sha256 file names {file_name!r}, which is not in the folder")
        actual = hashlib.sha256(target.read_bytes()).hexdigest()
        if actual != expected.lower():
            raise CheckpointError(f"{path.name}/{file_name}: sha256 does not match the pinned {expected[:12]}…; "
                                  "the file was changed or damaged, so it is not used")


@dataclass(frozen=True)
class ForeignConfig:
    """The shape facts the pages and links ask of any model's config."""

    num_layers: int
    num_heads: int
    d_model: int


@dataclass
class TransformersModel:
    """A model run through transformers (eager attention); read-only after loading, shared by every session."""

    name: str
    model: object  # a transformers PreTrainedModel in eval mode
    tokenizer: object  # tokenizers.Tokenizer from tokenizer.json
    config: ForeignConfig
    model_type: str
    is_encoder_decoder: bool
    is_decoder_only: bool
    task: str = "english"
    family: str = "transformers"
    special_ids: frozenset = field(default_factory=frozenset)
    # kind -> (layers, heads), from config.json (model.families: the LabModel layout): an encoder-decoder's two stacks
    # may differ in depth and width
    attention_layout: dict = field(default_factory=dict)

    def analyse(self, text: str):
        """AnalysedInput of `text`: encoder_self / decoder_self (causal) / cross, as the architecture has them."""
        import torch

        from model.capabilities import TRANSLATION
        from model.sources import AnalysedInput, KindMaps, Translation

        encoding = self.tokenizer.encode(text)
        ids, tokens = list(encoding.ids)[:MAX_TOKENS], list(encoding.tokens)[:MAX_TOKENS]
        truncated_from = len(encoding.ids) if len(encoding.ids) > MAX_TOKENS else None
        if not ids:
            raise CheckpointError(f"{self.name}: the tokenizer gave no token for this text")
        input_ids = torch.tensor([ids])

        def stack(attentions) -> np.ndarray:  # L tensors (1, h, T_q, T_k) -> (L, h, T_q, T_k)
            return torch.stack(list(attentions))[:, 0].float().numpy()

        with torch.no_grad():
            if self.is_encoder_decoder:
                generated = self.model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                                                max_new_tokens=MAX_NEW_TOKENS, do_sample=False, num_beams=1)
                written = generated[0].tolist()
                eos = getattr(self.model.generation_config, "eos_token_id", None)
                decoder_ids = written[:-1] if len(written) > 1 else written  # row t: the step that writes t + 1
                out = self.model(input_ids=input_ids, decoder_input_ids=torch.tensor([decoder_ids]),
                                 output_attentions=True)
                decoder_tokens = [self.tokenizer.id_to_token(i) or str(i) for i in decoder_ids]
                output_tokens = [self.tokenizer.id_to_token(i) or str(i) for i in written[1:]
                                 if i != eos and i not in self.special_ids]
                causal = np.triu(np.ones((len(decoder_ids), len(decoder_ids)), dtype=bool), 1)
                maps = {"encoder_self": KindMaps("encoder_self", stack(out.encoder_attentions), None, tokens, tokens),
                        "decoder_self": KindMaps("decoder_self", stack(out.decoder_attentions), None, decoder_tokens,
                                                 decoder_tokens, causal),
                        "cross": KindMaps("cross", stack(out.cross_attentions), None, decoder_tokens, tokens)}
                return AnalysedInput(self.name, text, tokens, maps, frozenset({TRANSLATION}),
                                     translation=Translation(output_tokens), truncated_from=truncated_from)
            out = self.model(input_ids=input_ids, output_attentions=True)
        kind = "decoder_self" if self.is_decoder_only else "encoder_self"
        causal = np.triu(np.ones((len(ids), len(ids)), dtype=bool), 1) if self.is_decoder_only else None
        maps = {kind: KindMaps(kind, stack(out.attentions), None, tokens, tokens, causal)}
        return AnalysedInput(self.name, text, tokens, maps, frozenset(), truncated_from=truncated_from)


def _open_with_transformers(entry: LocalModelEntry) -> TransformersModel:
    import transformers  # a slow import: only here, when a teacher's non-BERT model is opened

    from tokenizers import Tokenizer

    config = transformers.AutoConfig.from_pretrained(str(entry.path), local_files_only=True)
    loader = transformers.AutoModelForSeq2SeqLM if config.is_encoder_decoder else transformers.AutoModel
    try:
        model = loader.from_pretrained(str(entry.path), local_files_only=True, use_safetensors=True,
                                       attn_implementation="eager").eval()
    except (OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{entry.name}: transformers could not load it ({error})") from None
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    tokenizer = Tokenizer.from_file(str(entry.path / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    layers = max(getattr(text_config, "num_hidden_layers", 0), getattr(text_config, "decoder_layers", 0) or 0)
    heads = getattr(text_config, "num_attention_heads", 1)
    hidden = getattr(text_config, "hidden_size", 0) or getattr(text_config, "d_model", 0)
    is_decoder_only = not config.is_encoder_decoder and entry.model_type in ("gpt2", "gpt_neo", "opt")
    special = frozenset(i for i in (config.pad_token_id, config.bos_token_id, config.eos_token_id,
                                    getattr(config, "decoder_start_token_id", None)) if i is not None)
    if config.is_encoder_decoder:  # BART/Marian/T5 name each stack's depth and width; else both are the model's
        encoder = (getattr(text_config, "encoder_layers", None) or getattr(text_config, "num_layers", None) or layers,
                   getattr(text_config, "encoder_attention_heads", None) or heads)
        decoder = (getattr(text_config, "decoder_layers", None) or encoder[0],
                   getattr(text_config, "decoder_attention_heads", None) or encoder[1])
        layout = {"encoder_self": encoder, "decoder_self": decoder, "cross": decoder}
    else:
        layout = {"decoder_self" if is_decoder_only else "encoder_self": (layers, heads)}
    return TransformersModel(entry.name, model, tokenizer, ForeignConfig(layers, heads, hidden), entry.model_type,
                             bool(config.is_encoder_decoder), is_decoder_only, special_ids=special,
                             attention_layout=layout)


def open_local_model(entry: LocalModelEntry) -> PretrainedEncoder | TransformersModel:
    """Load an entry: BERT into our encoder, anything else through transformers; CheckpointError with the reason."""
    if not entry.usable:
        raise CheckpointError(f"{entry.name}: {entry.reason}")
    # The listing is re-read once a minute (ui/models.py): examine the files again as they are now.
    current = _examine(entry.path, entry.path.parent.resolve())
    if not current.usable:
        raise CheckpointError(f"{entry.name}: {current.reason}")
    check_pinned_sha256(entry.path)
    if entry.runs_in_our_encoder:
        return load_bert_folder(entry.path, entry.name)
    return _open_with_transformers(entry)
