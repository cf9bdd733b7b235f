"""The app's own widgets: the prompt viewer and the input line with history."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from engine.tui.keys import INPUT_BINDINGS


class PromptScreen(ModalScreen[None]):
    """The selected agent's exact prompt, full screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,p,q", "dismiss", "Close"),
    ]

    def __init__(self, title: str, prompt: str) -> None:
        super().__init__()
        self.title_text, self.prompt = title, prompt

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="prompt-view"):
            yield Static(Text(self.title_text, style="bold"))
            yield Static(Text(self.prompt))
        yield Footer()


class HistoryInput(Input):
    """An input line that recalls earlier lines with up and down."""

    BINDINGS: ClassVar[list[BindingType]] = INPUT_BINDINGS

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.history: list[str] = []
        self._at = 0

    def remember(self, line: str) -> None:
        self.history.append(line)
        self._at = len(self.history)

    def action_older(self) -> None:
        if self._at > 0:
            self._at -= 1
            self.value = self.history[self._at]

    def action_newer(self) -> None:
        if self._at < len(self.history):
            self._at += 1
            self.value = self.history[self._at] if self._at < len(self.history) else ""
