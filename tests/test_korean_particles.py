"""Korean particles after a filled-in value are the ones its last sound takes (issue 38: "8였습니다" read wrong)."""
import re

import pytest

from i18n import strings, translate
from i18n.particles import PAIRS, attach_particles


@pytest.mark.parametrize(("text", "expected"), [
    ("내 첫 번째 답은 8(이)었습니다.", "내 첫 번째 답은 8이었습니다."),     # 팔: a final ㄹ
    ("내 첫 번째 답은 2(이)었습니다.", "내 첫 번째 답은 2였습니다."),       # 이: a vowel
    ("내 첫 번째 답은 16(이)었습니다.", "내 첫 번째 답은 16이었습니다."),   # 육
    ("답은 10(이)었습니다", "답은 10이었습니다"),                        # 십
    ("GRU 없는 모델은(는) 답했습니다", "GRU 없는 모델은 답했습니다"),       # a Hangul final
    ("수업 AB2CD4이(가) 끝났습니다", "수업 AB2CD4가 끝났습니다"),           # 사
    ("수업 AB2CD3이(가) 끝났습니다", "수업 AB2CD3이 끝났습니다"),           # 삼
    ("L2 H3은(는) 가장", "L2 H3은 가장"),
    ("GRU은(는) 순환 신경망", "GRU는 순환 신경망"),                       # 유: letter names
    ("“mat”을(를) 쓰는 동안", "“mat”을 쓰는 동안"),                      # 맷, after the closing quote
    ("“the”을(를) 쓰는 동안", "“the”를 쓰는 동안"),
    ("가중치 중 43%을(를) 그곳에", "가중치 중 43%를 그곳에"),               # 퍼센트
    ("모델은 답에 77%을(를) 줍니다", "모델은 답에 77%를 줍니다"),             # issue 51: 칠십칠 퍼센트, not 칠
    ("가중치의 100%을(를) 거기에", "가중치의 100%를 거기에"),                # 백 퍼센트, not 백
    ("“100%”을(를) 두면", "“100%”를 두면"),                                # after its closing quote
    ("0.5%p이(가) 늘면", "0.5%p가 늘면"),                                  # 퍼센트포인트
    ("3×을(를) 넘으면", "3×를 넘으면"),                                    # 배, not 삼
    ("30°은(는) 돌린", "30°는 돌린"),                                      # 도, not 영
    ("390 px이(가) 넘는", "390 px이 넘는"),                                # 픽셀: a unit after a space
    ("120 ms은(는) 걸린", "120 ms는 걸린"),                                # 밀리초
    ("열 B은(는) 값", "열 B는 값"),                                        # a lone letter is its name (비)
    ("±8(으)로 읽습니다", "±8로 읽습니다"),                               # 팔: 로 after ㄹ
    ("√64(으)로 나눔", "√64로 나눔"),                                    # 사
    ("0.43(으)로 같습니다", "0.43으로 같습니다"),                         # 삼
    ("all-MiniLM-L6-v2(으)로 읽기", "all-MiniLM-L6-v2로 읽기"),
    ("**SmolLM2** 은(는) 인코더", "**SmolLM2** 는 인코더"),              # bold and its space kept
    ("⟶이(가) 있는 행", "⟶이(가) 있는 행"),                              # a sound we cannot tell: the pair stays
])
def test_each_pair_takes_the_form_its_word_ends_with(text, expected):
    assert attach_particles(text) == expected


def test_korean_strings_are_filled_with_the_right_particle_and_english_is_untouched():
    assert translate("ko", "peer.changed", answer="8") == "내 첫 번째 답은 8이었습니다."
    assert translate("ko", "peer.changed", answer="2") == "내 첫 번째 답은 2였습니다."
    assert "(" not in translate("ko", "class_teacher.expired", code="AB2CD3").split("끝났")[0]
    assert translate("en", "peer.changed", answer="8") == strings("en")["peer.changed"].format(answer="8")


def test_a_particle_after_a_value_is_written_as_a_pair():
    """A value's particle written as one fixed form ("{answer}였") is right for only some values: templates write the
    pair and attach_particles picks."""
    fixed = re.compile(r"\}(?:[*”’\"']+\s?)?(?:(?:[은는이가을를과와]|으로|로)(?![\uac00-\ud7a3(])|이었|였)")
    one_form = {key: text for key, text in strings("ko").items() if fixed.search(text)}
    assert not one_form, one_form
    assert any(pair in text for text in strings("ko").values() for pair in PAIRS)
