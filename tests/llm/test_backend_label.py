"""The backend line (issue 32, item 5): which backend and model a run uses, in words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.config import LLMConfig
from engine.llm.backend_label import backend_label, embedded_model, short_description
from engine.llm.connect import LOCAL_ENDPOINT, LLMChoice, build_dispatcher, choose_llm


def test_the_three_backends_of_the_issue() -> None:
    assert backend_label(["local"], ["smollm2:135m"]) == "embedded SmolLM2-135M"
    assert backend_label(["fake:"], ["gemma3:4b"]) == "fake (scripted)"
    assert backend_label(["http://host:11434"], ["qwen3:4b"]) == "http://host:11434 qwen3:4b"


def test_several_endpoints_or_models_are_compact() -> None:
    two = ["http://a:11434", "http://b:11434"]
    assert backend_label(two, ["qwen3:4b"] * 3) == "http://a:11434, http://b:11434 qwen3:4b"
    many = [f"http://h{n}:11434" for n in range(4)]
    assert backend_label(many, ["qwen3:4b"]) == "http://h0:11434, http://h1:11434 +2 more qwen3:4b"
    # the most used model first, then how many others
    models = ["gemma3:4b", "qwen3:4b", "qwen3:4b"]
    assert backend_label(["http://a:11434"], models) == "http://a:11434 qwen3:4b +1 model"
    three = ["a:1b", "b:1b", "c:1b"]
    assert backend_label(["http://a:11434"], three) == "http://a:11434 a:1b +2 models"


def test_the_embedded_models_by_name_or_file() -> None:
    assert embedded_model("local") == "SmolLM2-135M"
    assert embedded_model("local:gemma3") == "Gemma 3 270M"
    assert embedded_model("local:/models/tiny-q4.gguf") == "tiny-q4"
    assert backend_label(["local:gemma3:270m"], ["smollm2:135m"]) == "embedded Gemma 3 270M"
    assert short_description("SmolLM2-135M-Instruct") == "SmolLM2-135M"
    assert short_description("Gemma 3 270M (Q4_K_M)") == "Gemma 3 270M"


def test_a_mix_and_nothing() -> None:
    mixed = backend_label(["http://a:11434", "local"], ["smollm2:135m"])
    assert mixed == "http://a:11434 smollm2:135m + embedded SmolLM2-135M"
    assert backend_label([], ["qwen3:4b"]) == "none"
    assert backend_label(["http://a:11434"], []) == "http://a:11434"


def test_what_a_run_builds_reads_as_it_runs() -> None:
    """From the dispatcher a run builds: ``--llm fake:`` is the scripted backend whatever
    model the world names (the TUI showed ``Model: gemma3:4b``)."""
    fake = build_dispatcher(choose_llm("fake:look;say Hi", {}, LLMConfig()))
    assert backend_label([e.name for e in fake.endpoints], ["gemma3:4b"]) == "fake (scripted)"
    choice = choose_llm("http://gpu:11434", {}, LLMConfig())
    assert backend_label([e.url for e in choice.endpoints], ["qwen3:4b"]) == (
        "http://gpu:11434 qwen3:4b"
    )
    embedded = LLMChoice((LOCAL_ENDPOINT,), "default (embedded)")
    assert backend_label([e.url for e in embedded.endpoints]) == "embedded SmolLM2-135M"


_url = st.builds(
    lambda host, port: f"http://{host}:{port}",
    st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True),
    st.integers(1, 65535),
)
_model = st.from_regex(r"[a-z][a-z0-9.]{0,6}:[0-9]{1,3}[bm]", fullmatch=True)


@given(st.lists(_url, min_size=1, max_size=6), st.lists(_model, max_size=8), st.randoms())
def test_an_http_label_names_its_urls_and_models_in_any_order(
    urls: list[str], models: list[str], rnd: object
) -> None:
    label = backend_label(urls, models)
    assert "\n" not in label
    unique = list(dict.fromkeys(urls))
    for url in unique[:2]:
        assert url in label
    if len(unique) > 2:
        assert f"+{len(unique) - 2} more" in label
    kinds = set(models)
    if kinds:
        top = min(kinds, key=lambda m: (-models.count(m), m))  # most used, then A-Z
        assert label.split(" ")[-1] in {top, "model", "models"}
        assert top in label
    if len(kinds) > 1:
        assert label.endswith(f"+{len(kinds) - 1} model{'s' if len(kinds) > 2 else ''}")
    shuffled = list(models)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert backend_label(urls, shuffled) == label


@given(st.lists(st.sampled_from(["local", "http://a:1", "local:gemma3"]), max_size=4))
def test_fake_anywhere_is_the_scripted_backend(others: list[str]) -> None:
    assert backend_label([*others, "fake:"], ["qwen3:4b"]) == "fake (scripted)"
