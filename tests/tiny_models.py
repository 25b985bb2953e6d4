"""A models folder of tiny random-weight Hugging Face models, built offline in a temporary folder.

Usable: tiny-bert (BERT: runs in our encoder), tiny-gpt2 (decoder only) and tiny-bart (encoder-decoder), each with
2 layers, 2 heads and a word-level tokenizer made with the `tokenizers` library. Broken on purpose: a truncated
safetensors file, pickle-only weights, an unsupported architecture, a folder without config.json, and a model whose
sha256 pin does not match its weights.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

WORDS = ("the cat dog sat on mat a tired animal street it was because cross did not red big small house runs "
         "le chat chien est sur tapis un petit grand maison").split()


def _word_tokenizer(specials: list[str], template: tuple[str, str] | None = None):
    """A whitespace word-level tokenizer: specials first (ids 0..), then WORDS; unknown words -> specials' [UNK]."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate(specials + list(WORDS))}
    unk = next(s for s in specials if "unk" in s.lower())
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=unk))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if template is not None:
        first, last = template
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{first} $A {last}", pair=f"{first} $A {last} $B:1 {last}:1",
            special_tokens=[(first, vocab[first]), (last, vocab[last])])
    return tokenizer, len(vocab)


def build_models_folder(root: Path) -> Path:
    """Write every tiny model (and the broken entries) under root; returns root."""
    import torch
    from transformers import (BartConfig, BartForConditionalGeneration, BertConfig, BertModel, GPT2Config,
                              GPT2Model)

    torch.manual_seed(0)
    root.mkdir(parents=True, exist_ok=True)

    tokenizer, vocab = _word_tokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]"], ("[CLS]", "[SEP]"))
    bert = BertModel(BertConfig(vocab_size=vocab, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=64), add_pooling_layer=False)
    bert.save_pretrained(root / "tiny-bert")
    tokenizer.save(str(root / "tiny-bert" / "tokenizer.json"))

    tokenizer, vocab = _word_tokenizer(["<|endoftext|>", "<unk>"])
    gpt2 = GPT2Model(GPT2Config(vocab_size=vocab, n_embd=16, n_layer=2, n_head=2, n_positions=64,
                                bos_token_id=0, eos_token_id=0))
    gpt2.save_pretrained(root / "tiny-gpt2")
    tokenizer.save(str(root / "tiny-gpt2" / "tokenizer.json"))

    tokenizer, vocab = _word_tokenizer(["<s>", "<pad>", "</s>", "<unk>"], ("<s>", "</s>"))
    bart = BartForConditionalGeneration(BartConfig(
        # the decoder differs from the encoder (1 layer of 4 heads against 2 of 2): pickers follow the chosen kind
        vocab_size=vocab, d_model=16, encoder_layers=2, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        bos_token_id=0, pad_token_id=1, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=None))
    bart.generation_config.min_new_tokens = 4  # random weights would often end at once; teach with a few steps
    bart.save_pretrained(root / "tiny-bart")
    tokenizer.save(str(root / "tiny-bart" / "tokenizer.json"))

    truncated = root / "truncated"  # the BERT with its weights cut short
    shutil.copytree(root / "tiny-bert", truncated)
    data = (truncated / "model.safetensors").read_bytes()
    (truncated / "model.safetensors").write_bytes(data[: len(data) // 2])

    pickle_only = root / "pickle-only"
    pickle_only.mkdir()
    (pickle_only / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (pickle_only / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle, never opened")

    unsupported = root / "unsupported"
    shutil.copytree(root / "tiny-gpt2", unsupported)
    config = json.loads((unsupported / "config.json").read_text())
    (unsupported / "config.json").write_text(json.dumps({**config, "model_type": "mamba-9000"}))

    (root / "no-config").mkdir()

    pinned = root / "pinned-wrong"  # a sha256 pin that does not match the weights: refused on opening
    shutil.copytree(root / "tiny-bert", pinned)
    (pinned / "sha256").write_text("0" * 64 + "  model.safetensors\n")
    return root
