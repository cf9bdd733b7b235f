"""The player's lines for ``mudsim play``, read without blocking the event loop, and the
screen the world's events are printed on between them.

Two sources, each handing ``await next_line()`` one line at a time (None at the end of
input, or once ``interrupt`` was called):

- ``TerminalLines`` (stdin and stdout both a terminal): each line is read by ``input``
  (with readline's editing and history) in a daemon thread started for that line, so
  the loop keeps running agents meanwhile. An event printed while the player types
  clears the prompt line, prints, and redraws the prompt with what was typed so far.
  The terminal's settings are put back on ``close``, in case a read was left waiting.
- ``PipeLines`` (anything else: a pipe, a file, /dev/null): one daemon thread reads
  the raw file descriptor (``os.read``, not ``sys.stdin``, whose lock a thread still
  reading at exit would hold) and queues whole lines; no prompt is printed.

A reader thread never outlives its use in a harmful way: it only hands lines to the
loop (``call_soon_threadsafe``), and stops when the loop has closed.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TextIO

READ_SIZE = 65536


class LineSource(Protocol):
    async def next_line(self, prompt: str) -> str | None: ...

    def interrupt(self) -> None: ...

    def show(self, text: str) -> None: ...

    def close(self) -> None: ...


def open_lines(history: Path) -> LineSource:
    """The source for this process's stdin (``history``: readline's history file)."""
    loop = asyncio.get_running_loop()
    if _is_terminal(sys.stdin) and _is_terminal(sys.stdout):
        return TerminalLines(loop, history)
    return PipeLines(loop, sys.stdin.fileno() if _has_fd(sys.stdin) else None, sys.stdout)


def _has_fd(stream: TextIO) -> bool:
    try:
        stream.fileno()
    except (OSError, ValueError, AttributeError):
        return False
    return True


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


def _post(loop: asyncio.AbstractEventLoop, call: Callable[..., object], *args: Any) -> bool:
    """Run ``call(*args)`` on ``loop`` from a thread; False once the loop has closed."""
    try:
        loop.call_soon_threadsafe(call, *args)
    except RuntimeError:  # the loop is closed: play has ended
        return False
    return True


class PipeLines:
    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int | None, out: TextIO) -> None:
        self.out = out
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._interrupted = False
        self._ended = fd is None
        if fd is not None:
            encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
            thread = threading.Thread(
                target=self._read, args=(loop, fd, encoding), name="mudsim-stdin", daemon=True
            )
            thread.start()

    def _read(self, loop: asyncio.AbstractEventLoop, fd: int, encoding: str) -> None:
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        pending = ""
        while True:
            try:
                chunk = os.read(fd, READ_SIZE)
            except OSError:
                chunk = b""
            pending += decoder.decode(chunk, final=not chunk)
            *lines, pending = pending.split("\n")
            if not chunk and pending:
                lines.append(pending)
            for line in lines:
                if not _post(loop, self._queue.put_nowait, line.removesuffix("\r")):
                    return
            if not chunk:
                _post(loop, self._queue.put_nowait, None)
                return

    async def next_line(self, prompt: str) -> str | None:
        if self._ended or self._interrupted:
            return None
        line = await self._queue.get()
        if line is None or self._interrupted:
            self._ended = True
            return None
        return line

    def interrupt(self) -> None:
        self._interrupted = True
        self._queue.put_nowait(None)  # wakes a waiting next_line

    def show(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def close(self) -> None:
        return None


class TerminalLines:
    def __init__(self, loop: asyncio.AbstractEventLoop, history: Path) -> None:
        self.loop = loop
        self.history = history
        self._prompt = ""
        self._waiting: asyncio.Future[str | None] | None = None
        self._ended = False
        self._saved_tty: list[Any] | None = None
        with contextlib.suppress(ImportError, OSError):
            import termios

            self._saved_tty = termios.tcgetattr(sys.stdin.fileno())
        self._readline: Any = None
        try:
            import readline
        except ImportError:
            return
        self._readline = readline
        with contextlib.suppress(OSError):
            readline.read_history_file(history)
        readline.set_history_length(1000)

    async def next_line(self, prompt: str) -> str | None:
        if self._ended:
            return None
        waiting: asyncio.Future[str | None] = self.loop.create_future()
        self._waiting, self._prompt = waiting, prompt
        threading.Thread(
            target=self._read, args=(prompt, waiting), name="mudsim-input", daemon=True
        ).start()
        try:
            line = await waiting
        finally:
            self._waiting, self._prompt = None, ""
        if line is None:
            self._ended = True
        return line

    def _read(self, prompt: str, waiting: asyncio.Future[str | None]) -> None:
        line: str | None
        try:
            line = input(prompt)
        except (EOFError, OSError, UnicodeDecodeError):
            print(flush=True)
            line = None
        _post(self.loop, _resolve, waiting, line)

    def interrupt(self) -> None:
        self._ended = True
        if self._waiting is not None:  # leave the prompt's line
            print(flush=True)
            _resolve(self._waiting, None)

    def show(self, text: str) -> None:
        if self._waiting is None:  # the player's own command is running: no prompt shown
            print(text, flush=True)
            return
        typed = self._readline.get_line_buffer() if self._readline is not None else ""
        sys.stdout.write(f"\r\x1b[2K{text}\n{self._prompt}{typed}")
        sys.stdout.flush()

    def close(self) -> None:
        if self._readline is not None:
            with contextlib.suppress(OSError):
                self._readline.write_history_file(self.history)
        if self._saved_tty is not None:  # a read still waiting may have left it raw
            with contextlib.suppress(ImportError, OSError):
                import termios

                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved_tty)


def _resolve(waiting: asyncio.Future[str | None], line: str | None) -> None:
    if not waiting.done():
        waiting.set_result(line)
