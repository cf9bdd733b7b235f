"""A corpus for the summary gate: what small models answered when asked for a summary,
written down by us in the shapes we have seen them take (refusals, disclaimers,
questions back, chat-template leaks, terminal noise, markup, echoes of the prompt,
copies of one memory, loops, replies about something else), and good summaries that
must pass. Each entry is tied to a scene: the chunk of memories it answers. (The gate's
rates are measured on another corpus, written by someone who had not read the gate:
``summary_gate_corpus.json``, ``test_summary_gate_corpus.py``.)"""

from __future__ import annotations

from dataclasses import dataclass

from engine.memory import summary_quality as q

SCENES: dict[str, tuple[str, list[str]]] = {
    "forge": ("Bo", [
        "You think: The forge is cold this morning.",
        'Bea says, "Morning, Bo. Will the nails be ready by noon?"',
        'You say, "Not before the fire is hot."',
        "You work the bellows until the coals glow.",
        "Bea leaves north to The Well.",
        'You note "nails": Bea wants forty nails by noon.',
    ]),
    "orchard": ("Ada", [
        "The Quince Orchard. Old trees lean over the wall. Exits: south, east.",
        'Bo says, "Are the quinces ripe yet?"',
        'You say, "Not until the first frost."',
        "Cy arrives from the east.",
        'Cy says, "I saw a fox near the henhouse last night."',
        "You examine the gate: the latch is broken.",
    ]),
    "market": ("Cy", [
        "You go east to The Market Square.",
        'Dora says, "Fresh bread, two coins a loaf!"',
        "You buy a loaf of bread from Dora.",
        'Eli says, "Has anyone seen my lost key?"',
        "You tried: go west\nThis failed because: There is no exit west here.",
        'You say, "I found a key by the fountain yesterday."',
    ]),
    "library": ("Eliza", [
        "The Library. Shelves of old books reach the ceiling.",
        'Wren says, "Hello Eliza, what are you reading?"',
        'You say, "A history of the northern mines."',
        "Wren sits down by the window.",
        "You think: The map in this book shows a second tunnel.",
        'Wren says, "The mines closed forty years ago."',
    ]),
}  # fmt: skip

GOOD: dict[str, list[str]] = {
    "forge": [
        "I found the forge cold this morning and worked the bellows until the coals glowed.",
        "Bea came by early to ask whether her nails would be ready by noon; I told her the fire had to be hot first.",
        "I spent the morning at the forge. Bea wants forty nails by noon, so I noted it down before she went north to the well.",
        "The morning began with a cold forge. I pumped the bellows, and Bea, who needs forty nails, left for the well.",
        "I told Bea her nails would wait until the fire was hot, then I got the coals glowing.",
        "Bea asked me about her nails. I said the fire was not hot yet and worked at the forge while she walked to the well.",
        "My forge was cold when I started. By the time Bea left for the well, I had the coals burning and a note about her forty nails.",
        "I worked the bellows for a long while.\nBea is waiting on forty nails, promised for noon.",
        "I noted that Bea needs forty nails by noon. The forge was cold, so I got the fire going before anything else.",
    ],
    "orchard": [
        "I stood in the quince orchard and told Bo the fruit would not be ripe until the first frost.",
        "Bo asked about the quinces and I said we must wait for frost. Then Cy came from the east with news of a fox near the henhouse.",
        "Cy warned me that a fox prowled near the henhouse last night, and I noticed the orchard gate's latch is broken.",
        "I spent time among the old quince trees. The fruit needs frost, the latch on the gate is broken, and a fox is about.",
        "Bo was eager for the quinces, but I told him to wait for the first frost. Later I looked at the gate and saw its broken latch.",
        "I talked with Bo and Cy in the orchard about quinces and a fox, and I found that the gate latch had broken.",
        "Frost will ripen the quinces, I told Bo. Cy reported a fox by the henhouse, which worries me because the gate latch is broken.",
        "I kept watch over the orchard, answered Bo about the quinces, and learned from Cy about the fox near the henhouse.",
    ],
    "market": [
        "I walked east to the market square and bought a loaf of bread from Dora for two coins.",
        "At the market Eli was looking for a lost key, so I told him I had found one by the fountain yesterday.",
        "I bought bread from Dora and tried to go west, but there is no way west from the square.",
        "Dora was selling fresh bread in the square, and I got a loaf. Eli lost a key, and I think it may be the one I found at the fountain.",
        "I went to the market, bought bread, and told Eli about the key I picked up near the fountain.",
        "The market square was busy with Dora's bread. I learned there is no exit west, and I offered Eli news of a key.",
        "I spent my coins on a loaf from Dora. When Eli asked about his key, I remembered the one I found by the fountain.",
        "My trip east to the square got me bread and a chance to help Eli, who had lost his key.",
        "I tried to leave the square by the west and could not. Before that I bought bread and told Eli where I found a key.",
        "Eli lost his key and I may have it: I found one at the fountain yesterday. I also bought a loaf of Dora's bread.",
    ],
    "library": [
        "I was reading in the library when Wren came in and asked what I was reading; I told her it was a history of the northern mines.",
        "Wren sat by the window while I studied a book about the northern mines, whose map shows a second tunnel.",
        "I found a map in a history book that shows a second tunnel in the northern mines. Wren says the mines closed forty years ago.",
        "In the library I talked with Wren about the old mines and noticed a second tunnel on a map in my book.",
        "I learned from Wren that the mines closed forty years ago, and my book's map shows a tunnel nobody talks about.",
        "I spent the afternoon with a history of the mines. Wren joined me and sat down by the window.",
        "My reading turned up a map with a second tunnel. I want to ask Wren more, since she knows the mines closed forty years ago.",
        "I told Wren I was reading about the northern mines, and she told me they closed forty years ago.",
        "The library was quiet. I read about the mines, found the second tunnel on a map, and chatted with Wren.",
    ],
}  # fmt: skip

PARAPHRASED: dict[str, list[str]] = {
    "forge": [
        "Early today I warmed the forge for Bea's order of forty nails; she left north once I explained the fire needed heat.",
    ],
    "orchard": [
        "In the orchard I answered Bo's question about ripeness, heard Cy's warning about a fox, and found the gate latch broken.",
        "The orchard was quiet until Cy arrived and spoke of a fox. I should mend the broken latch before the fox finds the hens.",
    ],
    "library": [
        "Wren greeted me among the tall shelves, and I told her about my book on the northern mines.",
    ],
}  # fmt: skip
"""True summaries mostly in words of their own ("answered", "ripeness", "warning"): the
gate, which measures grounding by the memories' own words, rejects them, and only for
that (the cost of measuring: the independent corpus's rate is in the README)."""

LIMIT = 1050
"""The gate's ``limit`` in these tests (the default actor's summary_tokens, 300, at 3.5
characters a token)."""

_LONG = " ".join(
    summary for summary in GOOD["forge"] if "explained the fire needed heat" not in summary
) + (
    " I noted it down: forty nails for Bea by noon, once the fire is hot. The coals glow"
    " now, the bellows work, and Bea went north to the well."
)
"""A true summary of the forge, longer than ``LIMIT``: rejected for its length alone."""


@dataclass(frozen=True)
class Bad:
    scene: str
    reply: str
    problem: str
    truncated: bool = False


BAD: list[Bad] = [
    # empty, or cut off
    Bad("forge", "", q.EMPTY),
    Bad("orchard", "\n\n", q.EMPTY),
    Bad("market", "Sure!\n", q.EMPTY),
    Bad("library", "<think>The user wants a summary. Let me think.</think>", q.EMPTY),
    Bad("forge", "I found the forge cold and worked the bellows while Bea", q.CUT_OFF, True),
    Bad("library", "I read a history of the northern mines and Wren asked what", q.CUT_OFF, True),
    Bad("forge", "I walked into the forge and then I saw that the", q.MIDWAY),
    Bad("orchard", "I told Bo about the quinces and the frost and", q.MIDWAY),
    # terminal noise and control characters
    Bad("forge", "\x00\x1b[2J ???", q.NOISE),
    Bad("orchard", "\x1b[2J\x1b[HI told Bo that the quinces need the first frost to ripen.", q.NOISE),
    Bad("market", "I bought bread\x00 from Dora and told Eli about the key at the fountain.", q.NOISE),
    Bad("library", "Wren asked\x1b[31m what I was reading\x1b[0m and I said a history of mines.", q.NOISE),
    Bad("forge", "I worked the bellows \\x1b[0m until the coals glowed for Bea's forty nails.", q.NOISE),
    # chat-template and special tokens
    Bad("forge", "<|im_start|>assistant\nI lit the forge and talked with Bea about her nails.", q.TEMPLATE),
    Bad("orchard", "I told Bo the quinces need frost and saw the broken latch.<|im_end|>", q.TEMPLATE),
    Bad("market", "[INST] Summarize these memories [/INST] I bought bread from Dora.", q.TEMPLATE),
    Bad("library", "<start_of_turn>model\nI read about the mines while Wren sat by the window.<end_of_turn>", q.TEMPLATE),
    Bad("forge", "### Response: I worked the bellows all morning for Bea's forty nails.", q.TEMPLATE),
    Bad("orchard", "I told Bo to wait for frost and heard Cy's fox warning today.</s>", q.TEMPLATE),
    Bad("market", "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\nI bought bread.", q.TEMPLATE),
    # markup
    Bad("forge", "###", q.MARKUP),
    Bad("orchard", "...", q.MARKUP),
    Bad("market", "---\n***\n---", q.MARKUP),
    Bad("library", "## Memories\nI read about the northern mines while Wren sat by the window.", q.MARKUP),
    # refusals and AI disclaimers
    Bad("forge", "I'm sorry, but as an AI language model I cannot help with that.", q.REFUSAL),
    Bad("orchard", "I'm an AI and I have no memories.", q.REFUSAL),
    Bad("market", "There are no memories to summarize.", q.REFUSAL),
    Bad("library", "I read about the mines with Wren. However, I cannot summarize personal memories as I am an AI.", q.REFUSAL),
    Bad("forge", "As a language model, I do not have a forge, but Bea wanted nails by noon.", q.REFUSAL),
    Bad("orchard", "Unfortunately, I am unable to provide a summary of these memories.", q.REFUSAL),
    Bad("market", "I don't have personal memories, so there is nothing to summarize here for you.", q.REFUSAL),
    Bad("library", "I apologize, but I can't complete this task without more context about Eliza.", q.REFUSAL),
    # questions back, offers of help
    Bad("forge", "What would you like me to do with these memories?", q.ASKS_BACK),
    Bad("orchard", "Do you want the summary of Ada's day in first person or in third person?", q.ASKS_BACK),
    Bad("market", "I bought bread and told Eli about the key. Let me know if you need anything else!", q.ASKS_BACK),
    Bad("library", "I read about the mines and talked with Wren. I hope this helps with your story.", q.ASKS_BACK),
    Bad("forge", "I worked the bellows for Bea's nails. Would you like me to make it shorter?", q.ASKS_BACK),
    # too short, or no sentence
    Bad("forge", "I cannot.", q.TOO_SHORT),
    Bad("orchard", "No.", q.TOO_SHORT),
    Bad("market", "Summary of the market.", q.TOO_SHORT),
    Bad("library", "Wren. Mines. Map.", q.TOO_SHORT),
    Bad("market", '{"command": "lo', q.TOO_SHORT),
    Bad("forge", "Bo, Bea, forge, nails, bellows, coals, well, noon, fire, morning", q.NO_SENTENCE),
    Bad("orchard", "Quinces frost fox henhouse latch gate orchard Bo Cy Ada", q.NO_SENTENCE),
    Bad("library", "Eliza Wren library shelves books mines map tunnel window ceiling", q.NO_SENTENCE),
    # echoes of the instructions
    Bad("forge", "Summarize these memories of Bo in first person (I, me, my), in 2-4 sentences.", q.ECHO),
    Bad("orchard", "Begin at once with the summary: no introduction, no commentary.", q.ECHO),
    Bad("market", "Summarize these memories in first person (I, me, my), in 2-4 sentences.", q.ECHO),
    Bad("library", "MEMORIES:\nThe Library. Shelves of old books reach the ceiling and more.", q.ECHO),
    Bad("forge", "I wrote the summary in first person I me my and kept it to the point.", q.ECHO),
    # copies of memory lines
    Bad("forge", 'Bea says, "Morning, Bo. Will the nails be ready by noon?"', q.COPY),
    Bad("orchard", 'Cy says, "I saw a fox near the henhouse last night."', q.COPY),
    Bad("market", "You go east to The Market Square. You buy a loaf of bread from Dora.", q.COPY),
    Bad("library", "The Library. Shelves of old books reach the ceiling. Wren sits down by the window.", q.COPY),
    # about something else
    Bad("forge", "The sky was clear and the sea was calm as the ship sailed into the harbor.", q.UNGROUNDED),
    Bad("orchard", "Once upon a time a princess lived in a castle high above a valley of roses.", q.UNGROUNDED),
    Bad("library", "The recipe calls for two cups of flour, three eggs and a spoonful of honey.", q.UNGROUNDED),
    # loops
    Bad("forge", "I lit the forge. I lit the forge. I lit the forge. I lit the forge.", q.LOOP),
    Bad("orchard", " ".join(["I told Bo about the frost and"] * 6), q.LOOP),
    Bad("market", "It rained on the market and my bread. It rained on the market and my bread. It rained on the market and my bread.", q.LOOP),
    # longer than the prompt shows whole
    Bad("forge", _LONG, q.TOO_LONG),
]  # fmt: skip
