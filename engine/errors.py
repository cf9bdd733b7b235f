"""Every error mudsim shows a user, and the exit code it ends the CLI with.

    MudsimError                 one clear line for the user; exit 2 unless said otherwise
    ├── UsageError              a bad command line (unknown flag, missing argument)
    ├── WorldFileError          a world file is malformed (names the file, line and field)
    ├── SweepFileError          a sweep file is malformed (names the file, line and field)
    ├── VaultError              a vault file is unreadable or invalid (names the file)
    │   └── VaultLockedError    another process owns the vault
    ├── UnknownCharacterError   `--as` / `--agent` names nobody in the world
    ├── UnsafeNameError         a name or title that cannot become a file name
    ├── UnknownRunError         `--run` names no run recorded in the vault (or none is)
    ├── MissingExtraError       a feature needs an optional extra (`pip install 'mudsim[X]'`)
    └── LLMError                a language-model call failed (exit 3)
        ├── LLMUnavailableError     not reachable, or timed out
        └── LLMResponseError        an error answer, or one we cannot read
            └── LLMRequestError     the request itself was refused (a prompt longer
                                    than the context, a grammar the model rejects)

In-world failures (no such exit, a mistyped verb) are not errors: they are command
results with ``ok=False``. The CLI catches ``MudsimError`` and prints ``str(error)`` as
one line on stderr; nothing else reaches the user as a traceback.
"""

from __future__ import annotations


class MudsimError(Exception):
    """A problem the user can fix; ``str()`` is the one line we show."""

    exit_code: int = 2


class UsageError(MudsimError):
    """A bad command line: an unknown flag or a missing argument."""


class WorldFileError(MudsimError):
    """A world file failed to parse or validate."""


class SweepFileError(MudsimError):
    """A sweep file (``mudsim sweep``) failed to parse or validate."""


class VaultError(MudsimError):
    """A vault file is unreadable, invalid, or cannot be written."""


class VaultLockedError(VaultError):
    """Another mudsim process holds the vault's lock."""


class UnknownCharacterError(MudsimError):
    """A character name given on the command line matches nobody."""


class UnsafeNameError(MudsimError):
    """A name that would be empty or escape its folder once made a file name."""


class UnknownRunError(MudsimError):
    """``--run`` names no recorded run, or the vault has none."""


class MissingExtraError(MudsimError):
    """What was asked for needs an optional extra that is not installed."""


class LLMError(MudsimError):
    """A language-model call failed."""

    exit_code = 3
    started = False
    """True when it failed after the reply had begun to stream (never retried elsewhere)."""
    endpoint = ""
    """Which endpoint the last attempt went to (the dispatcher sets it)."""
    retries = 0
    """Attempts before the last (the dispatcher sets it)."""
    memory_wait = 0.0
    """Seconds it waited in the dispatcher's queue while urgent compactions went first
    (the dispatcher sets it; ``Generation.memory_wait``)."""


class LLMUnavailableError(LLMError):
    """The server could not be reached, or timed out."""


class LLMResponseError(LLMError):
    """The server answered with an error or with something we cannot read."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        """Seconds the server asked us to wait (its ``Retry-After`` header), if it said."""

    @property
    def retryable(self) -> bool:
        """5xx and 429 may pass; other 4xx will not."""
        return self.status is None or self.status == 429 or self.status >= 500


class LLMRequestError(LLMResponseError):
    """The model refused the request itself (the embedded model: a prompt longer than its
    context, a grammar it cannot use): sending it again cannot help."""

    @property
    def retryable(self) -> bool:
        return False


def about_the_request(error: LLMError) -> bool:
    """The error is about the request, not the server: a refusal of the request itself,
    or an HTTP 4xx answer other than 408 (a timeout) and 429 (too many requests). Sending
    the same request again cannot help; a server error, a timeout or a refused
    connection may pass."""
    if isinstance(error, LLMRequestError):
        return True
    if isinstance(error, LLMResponseError) and error.status is not None:
        return 400 <= error.status < 500 and error.status not in (408, 429)
    return False
