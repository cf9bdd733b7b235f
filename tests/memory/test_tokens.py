"""Token counting (``engine.memory.tokens``): the estimate servers are fitted by never
counts fewer tokens than the embedded model's tokenizer (SmolLM2-135M) on any text,
whatever its script, and stays within about twice it on natural text; cutting a text to
a number of tokens; the budgets; which counter an LLM brings.

The comparisons with the real tokenizer load only the model's vocabulary (a tenth of a
second): they run in the default suite, and skip where the ``local`` extra is not
installed."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.tokens import (
    CHARACTERS,
    ELLIPSIS,
    ESTIMATE,
    RESERVED,
    MostOf,
    TokenCounter,
    counter_of,
    cut_text,
    estimate_tokens,
    fits,
    most_of,
    prompt_room,
)


@pytest.fixture(scope="module")
def smollm2() -> TokenCounter:
    """The embedded model's tokenizer (its vocabulary only)."""
    pytest.importorskip("llama_cpp")
    from engine.llm.local import embedded_tokens

    tokens = embedded_tokens()
    if tokens is None:
        pytest.skip("the embedded model is not installed")
    return tokens


SAMPLES = {
    "English": "The quick brown fox jumps over the lazy dog. Lanterns of hammered copper "
    "hang from a low beam, and the air smells of lamp oil and old rope.",
    "German": "Die Straßenbahnhaltestelle befindet sich gegenüber dem Bürgermeisteramt; "
    "Überraschungsgäste wünschen sich Größe und Gemütlichkeit.",
    "French": "L'élève à côté de la fenêtre a reçu un cadeau étonnant : une boîte pleine "
    "de pièces dorées, déjà ouverte. Œuvre, cœur, naïve, Noël.",
    "Russian": "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица "
    "России. Достопримечательности Санкт-Петербурга.",
    "Chinese": "我在花园里散步，和艾达说话，告诉她榅桲还没有成熟。天气很冷，风从北方吹来。"
    "图书馆在广场的东边。",
    "Japanese": "私は庭を散歩して、エイダと話しました。マルメロはまだ熟していません。"
    "東京都庁は新宿にあります。",
    "Korean": "나는 정원을 산책하며 에이다와 이야기했다. 마르멜로는 아직 익지 않았다. "
    "서울특별시는 대한민국의 수도이다.",
    "Arabic": "ذهبت إلى الحديقة وتحدثت مع آدا عن السفرجل الذي لم ينضج بعد.",
    "emoji": "🙂😀🎉🚀👍🏽🇫🇷❤️‍🔥🧑‍🚀 great job!!! 🎂🎂🎂",
    "code": "def f(x: int) -> dict[str, list[int]]:\n    return {'a': [x**2 for _ in "
    "range(10)]}  # 0x1F, 3.14e-5\n",
    "random bytes": bytes(random.Random(7).randrange(256) for _ in range(400)).decode("latin-1"),
}


@pytest.mark.parametrize("script", SAMPLES)
def test_the_estimate_is_never_below_smollm2_and_within_about_twice_it(
    smollm2: TokenCounter, script: str
) -> None:
    text = SAMPLES[script]
    real, guess = smollm2.count(text), estimate_tokens(text)
    assert real <= guess
    assert guess <= 2.5 * real  # conservative, not the byte count (4x for English)


def test_smollm2_counts_about_two_tokens_a_chinese_character(smollm2: TokenCounter) -> None:
    chinese = SAMPLES["Chinese"]
    assert 1.5 <= smollm2.count(chinese) / len(chinese) <= 2.5
    assert estimate_tokens(chinese) >= smollm2.count(chinese)
    memory = "你说：" + "我在花园里散步，和艾达说话。" * 120  # a fitted chunk of issue 42
    assert estimate_tokens(memory) >= smollm2.count(memory) > len(memory)


def test_the_embedded_counter_counts_as_llama_cpp_tokenizes(smollm2: TokenCounter) -> None:
    from llama_cpp import Llama

    from engine.llm.local import model_file

    llama = Llama(model_path=str(model_file()), vocab_only=True, verbose=False)
    for text in [*SAMPLES.values(), "", "<|im_start|>user", "a\n\n\nb"]:
        expected = len(llama.tokenize(text.encode(), add_bos=False, special=False))
        assert smollm2.count(text) == expected


_WORDS = [
    "the", "of", "and", "to", "in", "is", "it", "quick", "brown", "fox", "lantern", "copper",
    "Straße", "gegenüber", "élève", "cœur", "Москва", "столица", "Ξεσκεπάζω", "我在花园",
    "東京都", "서울특별시", "مرحبا", "שלום", "नमस्ते", "ฉันเดิน", "🙂", "🎉", "👍🏽", "1234",
    "3.14", "2026-01-01T08:00", "don't", "it's", "->", "==", "**", "###", "...", ",", ".",
    ";", ":", "!", "?", "(", ")", "[", "]", "{", "}", '"', "'",
]  # fmt: skip
texts = st.one_of(
    st.text(),
    st.text(alphabet=string.printable),
    st.text(alphabet=string.ascii_letters + " ", max_size=60),
    st.text(alphabet=string.ascii_lowercase, min_size=10, max_size=120),
    st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)),
    st.text(alphabet=st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3)),
    st.text(alphabet=st.characters(min_codepoint=0x370, max_codepoint=0x6FF)),
    st.text(alphabet=st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF)),
    st.text(alphabet=" \n\t\r\x0b\x0c\x85\u3000\u00a0"),
    st.lists(st.sampled_from([*_WORDS, " ", "  ", "\n", "\n\n", "    "])).map("".join),
    st.binary().map(lambda data: data.decode("utf-8", "replace")),
)


@settings(max_examples=400)
@given(texts)
def test_the_estimate_never_counts_fewer_tokens_than_smollm2(
    smollm2: TokenCounter, text: str
) -> None:
    assert smollm2.count(text) <= estimate_tokens(text)


# --- pure ------------------------------------------------------------------------------


def test_the_estimate_by_script() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("我") == 3 + 2  # its bytes, and the slack any text gets
    assert estimate_tokens("我我我我") == 4 * 3 + 2
    assert estimate_tokens("ж") == 2 + 2
    assert estimate_tokens("🙂") == 4 + 2
    assert estimate_tokens("1234") == 4 + 2  # each digit a token
    english = "The lanterns hang from the beam."
    assert len(english) / 4 < estimate_tokens(english) <= len(english) / 2


def test_fits_never_counts_a_text_its_bytes_bound() -> None:
    @dataclass
    class Counting:
        counted: int = 0

        def count(self, text: str) -> int:
            self.counted += 1
            return len(text.encode())

    counter = Counting()
    assert fits("short text", 100, counter)
    assert counter.counted == 0  # 10 bytes: no tokenizer needs more than 10 tokens
    assert not fits("x" * 200, 100, counter)
    assert counter.counted == 1
    assert fits("abc", 3, CHARACTERS)
    assert not fits("abcd", 3, CHARACTERS)


@given(st.text(max_size=400), st.integers(-5, 120), st.booleans())
def test_a_cut_text_fits_and_keeps_an_end_of_it(text: str, limit: int, keep_end: bool) -> None:
    for counter in (ESTIMATE, CHARACTERS):
        cut = cut_text(text, limit, counter, keep_end=keep_end)
        if fits(text, limit, counter):
            assert cut == text
            continue
        assert counter.count(cut) <= max(0, limit)
        if cut:
            if keep_end:
                assert cut.startswith(ELLIPSIS)
                assert text.endswith(cut[1:])
            else:
                assert cut.endswith(ELLIPSIS)
                assert text.startswith(cut[:-1])


def test_a_cut_falls_at_a_word_boundary() -> None:
    text = ("Copper lanterns hang from the beam of the hall. " * 50).strip()
    cut = cut_text(text, 30, CHARACTERS)
    assert cut == "Copper lanterns hang from the…"
    end = cut_text(text, 30, CHARACTERS, keep_end=True)
    assert end == "…from the beam of the hall."
    assert cut_text("我在花园里散步" * 10, 7, CHARACTERS) == "我在花园里散…"


def test_the_room_a_prompt_may_take() -> None:
    assert prompt_room({"num_ctx": 8192, "num_predict": 64}) == 8192 - 64 - RESERVED
    assert prompt_room({"num_ctx": 8192, "num_predict": -1}, default_reply=400) == 8192 - 404
    assert prompt_room({"num_ctx": 8192}, default_reply=400) == 8192 - 400 - RESERVED
    assert prompt_room({"num_ctx": 100, "num_predict": 400}) == 0
    assert prompt_room({"num_predict": 10}) is None
    assert prompt_room({"num_ctx": "x"}) is None


def test_an_llm_brings_its_counter_and_one_without_gets_the_estimate() -> None:
    @dataclass
    class WithTokenizer:
        token_counter: TokenCounter

    assert counter_of(WithTokenizer(CHARACTERS)) is CHARACTERS
    assert counter_of(object()) is ESTIMATE
    assert counter_of(None) is ESTIMATE
    assert most_of([]) is ESTIMATE
    assert most_of([CHARACTERS, CHARACTERS]) is CHARACTERS
    both = most_of([CHARACTERS, ESTIMATE])
    assert isinstance(both, MostOf)
    assert both.count("我我") == max(2, estimate_tokens("我我"))
