"""A run record's tape: what is appended reads back the same, whatever the text and
numbers (pydantic-core writes the JSON; ``read_tape`` reads it with ``json``)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.vault.run_store import Tape, read_tape

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",)))  # what a str can encode
)
LINES = st.dictionaries(st.text(max_size=8), st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
), max_size=6)  # fmt: skip


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(LINES, min_size=1, max_size=4))
def test_what_a_tape_is_given_reads_back_the_same(
    tmp_path: Path, lines: list[dict[str, object]]
) -> None:
    path = tmp_path / "tape.jsonl"
    path.unlink(missing_ok=True)
    tape = Tape(path, sync_group=None)
    try:
        for line in lines:
            tape.append(line)
    finally:
        tape.close()
    assert read_tape(path) == lines
    assert path.read_bytes().count(b"\n") == len(lines)  # one line each, newlines escaped
