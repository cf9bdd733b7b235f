"""A turn's prompt in the running simulation: fitted to the actor's ``num_ctx`` in tokens,
it says how many older memories it left out, and ``@memory-status`` shows that count."""

from __future__ import annotations

import re

from helpers import memories, run

from engine.agents.reply import repeat_key
from engine.llm.fake import ScriptedBackend
from engine.memory.tokens import RESERVED, estimate_tokens
from engine.sim.prompting import build_prompt, recent_commands
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation


def _bo_remembers(sim: Simulation, count: int) -> None:
    for i in range(count):
        run(sim, "Bo", f"think Thought number {i}, about the anvil and the long winter ahead.")


def _squeeze(sim: Simulation, tokens: int) -> None:
    """Make the actor's num_ctx hold ``tokens`` tokens of prompt beside a 1-token reply
    (as the estimate counts them: the scripted backend has no tokenizer of its own)."""
    sim.actor_options = {**sim.actor_options, "num_ctx": tokens + 1 + RESERVED, "num_predict": 1}


async def _one_turn(sim: Simulation) -> ScriptedBackend:
    backend = ScriptedBackend(["look"])
    models = {c.id: "tiny" for c in sim.world.characters.values() if c.type == "agent"}
    await Scheduler(sim, backend, make_thinkers(sim, models)).run(turns=1)
    return backend


async def test_memory_status_shows_how_many_the_last_prompt_left_out(sim: Simulation) -> None:
    _bo_remembers(sim, 6)  # windows 4/4: all six are shown word for word
    full = build_prompt(sim, sim.character("Bo"))
    _squeeze(sim, estimate_tokens(full) - 40)
    preview = build_prompt(sim, sim.character("Bo"))
    assert estimate_tokens(preview) <= estimate_tokens(full) - 40
    assert sim.minds["bo"].hidden_in_last_prompt is None  # a preview records nothing
    assert "not shown in the last prompt" not in run(sim, "Pat", "@memory-status Bo").text

    backend = await _one_turn(sim)
    sent = [p for p in backend.prompts if p.endswith("~Bo>")][-1]
    found = re.search(r"\n---\n\((\d+) earlier memories not shown\)\n", sent)
    assert found is not None, sent
    hidden = int(found.group(1))
    assert 1 <= hidden < 6
    assert sum(f"Thought number {i}," in sent for i in range(6)) == 6 - hidden
    assert sim.minds["bo"].hidden_in_last_prompt == hidden
    status = run(sim, "Pat", "@memory-status Bo").text
    assert f"{hidden} older memories not shown in the last prompt (to fit num_ctx)" in status
    assert sim.minds["bo"].status().to_json()["hidden_in_last_prompt"] == hidden


async def test_a_prompt_that_fits_hides_nothing(sim: Simulation) -> None:
    _bo_remembers(sim, 3)
    await _one_turn(sim)
    assert sim.minds["bo"].hidden_in_last_prompt == 0
    assert "not shown in the last prompt" not in run(sim, "Pat", "@memory-status Bo").text


async def test_memory_status_says_which_parts_the_last_prompt_cut_or_dropped(
    sim: Simulation,
) -> None:
    _bo_remembers(sim, 3)
    sim.world.rooms["yard"].description = "Mud and straw cover the yard. " * 4_000  # 120 KB
    run(sim, "Bo", "note Anvil -> " + "The anvil must be oiled every week. " * 30)
    await _one_turn(sim)
    bo = sim.minds["bo"]
    assert "room description" in bo.cut_in_last_prompt
    status = run(sim, "Pat", "@memory-status Bo").text
    assert "the last prompt cut short: " in status
    assert "room description" in status
    data = bo.status().to_json()
    assert data["cut_in_last_prompt"] == list(bo.cut_in_last_prompt)
    assert data["dropped_from_last_prompt"] == list(bo.dropped_from_last_prompt)
    assert bo.state().last_prompt is not None  # saved with the memory state: `mudsim status`


def test_recent_commands_are_the_last_ones_run_oldest_first(sim: Simulation) -> None:
    bo = sim.character("Bo")
    assert recent_commands(sim, bo, 3) == []
    run(sim, "Pat", "go north")  # to Bo's yard: what Pat says there is Bo's memory too
    for line in ["look", "think The anvil is cold.", "say Morning.", "emote nods.", "look"]:
        run(sim, "Bo", line)
        run(sim, "Pat", "say Hello, Bo.")  # others' speech between: not Bo's commands
    assert sum("Pat says" in memory for memory in memories(sim, "Bo")) == 5
    keys = [repeat_key(line) for line in ["say Morning.", "emote nods.", "look"]]
    assert recent_commands(sim, bo, 3) == keys
    assert recent_commands(sim, bo, 1) == keys[-1:]
    assert recent_commands(sim, bo, 0) == []
    assert len(recent_commands(sim, bo, 50)) == 5
