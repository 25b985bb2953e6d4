"""A byte-level BPE token as text a reader can tell apart: byte-level BPE (GPT-2's, SmolLM2's) splits a character of
several UTF-8 bytes (Korean, emoji) over tokens, and each such token decoded alone is only \ufffd, the same for every
byte; it is written <0xEB> instead, from the token's own bytes."""
from __future__ import annotations


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's byte-level BPE writes byte b as one printable character (Radford et al. 2019's bytes_to_unicode):
    that character -> b."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(256) if b not in printable]
    return {**{chr(b): b for b in printable}, **{chr(256 + n): b for n, b in enumerate(shifted)}}


_BYTE_OF = _byte_level_alphabet()


def readable_bytes(data: bytes) -> str:
    """UTF-8 text with each byte that is not part of a whole character written <0xEB>."""
    out, start = [], 0
    while start < len(data):
        try:
            out.append(data[start:].decode("utf-8"))
            break
        except UnicodeDecodeError as error:
            bad = start + error.start
            out.append(data[start:bad].decode("utf-8") + f"<0x{data[bad]:02X}>")
            start = bad + 1
    return "".join(out)


def token_text(tokenizer, token_id: int) -> str:
    """One token of a `tokenizers.Tokenizer` as text, split bytes written <0xEB>."""
    text = tokenizer.decode([token_id], skip_special_tokens=False)
    if "\ufffd" in text:
        piece = tokenizer.id_to_token(token_id)
        if piece is not None and all(ch in _BYTE_OF for ch in piece):
            text = readable_bytes(bytes(_BYTE_OF[ch] for ch in piece))
    return text
