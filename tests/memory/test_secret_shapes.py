"""The shapes and told values redaction finds (``secret_shapes``, ``secret_told``), and the
look-alikes it leaves: each rule once, with examples of our own (the measured rates are
``test_secret_corpus_independent``'s)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.memory.secret_shapes import luhn, random_looking
from engine.memory.secrets import REDACTED, redact


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("the card is 4539 1488 0343 6467, exp 04/29", "4539 1488 0343 6467"),
        ("amex 3714-496353-98431 on file", "3714-496353-98431"),
        ("the first half is Zq8RwT3mXc\nand Lp0VbN6yHs2KjU9e is the rest", "Zq8RwT3mXc"),
        ("tail of the key: kW3pZ8qR\nT5vN2mX7cL0j", "kW3pZ8qR"),
        ("mysql -u bo -pGr1nd!stone ledger", "Gr1nd!stone"),
        ("openssl enc -k 'three blind mice' -in a", "three blind mice"),
        ("WIFI:T:WPA;S:Mill;P:oat-cake-99;;", "oat-cake-99"),
        ("recovery codes: 4hq2-9xk1, 7zz0-3mm8", "7zz0-3mm8"),
        ("The shed unlocks with 90210.", "90210"),
        ("the key for the cider house is BrambleJam7", "BrambleJam7"),
        ("Kennwort für das Lager lautet Apfelbaum9", "Apfelbaum9"),
        ("what's the code for the shed? hm, 4417 I think", "4417"),
        ("pasword for the till: Copper7Kettle", "Copper7Kettle"),
    ],
)
def test_each_shape_and_told_value_is_redacted(text: str, gone: str) -> None:
    redacted = redact(text)
    assert gone not in redacted
    assert REDACTED in redacted
    assert redact(redacted) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "# Knowledge pass 20261121-101500",
        "id 0f8fad5b-d9cb-469f-a165-70867728950e",
        "model digest sha256:8950abfda7b727630760dd35bcf5c3daa7631aff223a90f7728c0d2521dde10c",
        "model qwen2.5:7b-instruct-q4_K_M, then hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
        "Reverted 9fceb02d0ae598e95dc970b74767f19372d61af8 on Monday.",
        "See ~/.ssh/id_ed25519.pub and C:\\Users\\bo\\notes.txt",
        "Merge branch feature/login-fix-2 into main.",
        "password: ${DB_PASSWORD}",
        "Password: ********",
        "Authorization: Bearer <token>",
        "token 3 of 5 for the carousel",
        "Key 3 on the piano sticks.",
        "The code is 300 lines long.",
        "The keypad by the door is 12 years old.",
        "Locker room opens at 0600.",
        "The code was changed in 2019.",
        "what's the wifi called? MillGuest",
        "The primary key is order_id.",
        "#HarvestFair2026 is trending.",
        "Serial 4000 1234 5678 9011 is on the millstone.",
        "Did you change the Wi-Fi password? It stopped working.",
        "El código postal es 28001.",
    ],
)
def test_look_alikes_are_left_as_they_are(text: str) -> None:
    assert redact(text) == text


def test_luhn_knows_a_card_from_a_near_miss() -> None:
    assert luhn("4539148803436467")
    assert not luhn("4539148803436468")


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=16, max_size=40))
def test_a_lower_case_word_run_is_never_a_key(word: str) -> None:
    assert not random_looking(word)
