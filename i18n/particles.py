"""Korean particles after a filled-in value: "{answer}(이)었습니다" reads "8이었습니다" after 8 (팔) and "2였습니다"
after 2 (이).

A Korean particle depends on how the word before it ends: with a final consonant (받침) it is 은, 이, 을, 과, 으로,
이었; without one 는, 가, 를, 와, 로, 였 (and 로 after a final ㄹ). A template cannot know which, since the word is a
value ({answer}, {model}, {head}), so the Korean strings write both forms as a pair, "은(는)", and `attach_particles`
picks one from the character the value ends with: a Hangul syllable's own final, a digit's Korean reading (8 팔, 2 이,
0 영 and 10 십, 100 백…), a unit after a number as its Korean name (77% 퍼센트, 3× 배, 30° 도, 390 px 픽셀, 100 ms
밀리초), a Latin word's usual Korean transcription read roughly from its last letters (cat 캣, model 모델, GRU 지알유,
L2 H3 엘투 에이치삼). Where the sound is not known (a symbol, an emoji) the pair stays as written, which is still correct Korean.
"""
from __future__ import annotations

import re

# pair as written -> (after a final consonant, after a vowel). (으)로 also takes 로 after a final ㄹ.
PAIRS = {
    "은(는)": ("은", "는"),
    "이(가)": ("이", "가"),
    "을(를)": ("을", "를"),
    "과(와)": ("과", "와"),
    "(으)로": ("으로", "로"),
    "(이)었": ("이었", "였"),
}
_PAIR = re.compile(r"(?P<word>[^\s*”’\"'」』()\[\]]+)(?P<closing>[*”’\"'」』)\]]*\s?)(?P<pair>"
                   + "|".join(re.escape(pair) for pair in PAIRS) + ")")

_DIGIT_FINAL = {"0": "ㅇ", "1": "ㄹ", "2": "", "3": "ㅁ", "4": "", "5": "", "6": "ㄱ", "7": "ㄹ", "8": "ㄹ", "9": ""}
_LETTER_NAME_FINAL = {"L": "ㄹ", "M": "ㅁ", "N": "ㄴ", "R": "ㄹ"}  # 엘, 엠, 엔, 알; every other letter's name ends in a vowel
_WORD_FINAL = {"l": "ㄹ", "m": "ㅁ", "n": "ㄴ", "k": "ㄱ", "c": "ㄱ", "p": "ㅂ", "b": "ㅂ", "t": "ㅅ"}
# A unit written after a number -> the final of its Korean name. A unit is read by its name, never letter by letter or
# as an English word: "px" is 픽셀 (ㄹ), where the letter rule would hear 피엑스; "%" is 퍼센트 whatever comes before.
# (No k, M or B: after a digit they may end a class code or a label, read letter by letter.)
_UNIT_FINAL = {"%": "", "%p": "", "pp": "", "×": "", "x": "", "°": "", "s": "", "ms": "", "px": "ㄹ", "KB": "",
               "MB": "", "GB": "", "bits": "", "nats": ""}
_UNIT = re.compile(r"\d(" + "|".join(sorted(map(re.escape, _UNIT_FINAL), key=len, reverse=True)) + r")$")
# after a space ("390 px") the unit is a word of its own; a lone letter there is a name (B 비), not a unit
_UNIT_WORDS = {unit for unit in _UNIT_FINAL if len(unit) > 1 or not unit.isalpha()}
_HANGUL_FIRST, _HANGUL_LAST, _FINALS = 0xAC00, 0xD7A3, 28
_RIEUL = 8  # the index of ㄹ among a syllable's finals


def final_sound(word: str) -> str | None:
    """The final consonant a Korean reader hears at the end of `word` ('' for a vowel, 'ㄹ' for ㄹ, another jamo
    for any other consonant), or None where it cannot be told."""
    last = word[-1]
    if _HANGUL_FIRST <= ord(last) <= _HANGUL_LAST:
        final = (ord(last) - _HANGUL_FIRST) % _FINALS
        return "" if final == 0 else ("ㄹ" if final == _RIEUL else "ㅇ")
    unit = _UNIT.search(word)
    if unit is not None or word in _UNIT_WORDS:
        return _UNIT_FINAL[unit.group(1) if unit is not None else word]
    if last in _DIGIT_FINAL:  # a trailing 0 reads 영, 십, 백, 천 or 만: all end in a consonant, none in ㄹ
        return _DIGIT_FINAL[last]
    letters = re.search(r"[A-Za-z]+$", word)
    if letters is None:
        return None
    letters = letters.group()
    if letters.isupper() and len(letters) <= 4:  # an acronym or a label read letter by letter: GRU, L2 H3, KV
        return _LETTER_NAME_FINAL.get(letters[-1], "")
    lower = letters.lower()
    if lower.endswith("ng"):
        return "ㅇ"
    return _WORD_FINAL.get(lower[-1], "")


def _choose(match: re.Match) -> str:
    with_final, without = PAIRS[match["pair"]]
    sound = final_sound(match["word"])
    if sound is None:
        particle = match["pair"]
    elif match["pair"] == "(으)로":
        particle = with_final if sound not in ("", "ㄹ") else without
    else:
        particle = with_final if sound else without
    return match["word"] + match["closing"] + particle


def attach_particles(text: str) -> str:
    """`text` with each particle pair ("은(는)", "(이)었"…) replaced by the form the word before it takes."""
    return _PAIR.sub(_choose, text)
