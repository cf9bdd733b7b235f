"""``--ray [ADDRESS]``: each run a Ray task, on this machine or a Ray cluster.

``ray.init(address=ADDRESS)`` joins a cluster (``auto``, ``ray://head:10001``, ...); no
address starts a local Ray with this machine's cores. Each task declares what a run
needs (``resources`` in the sweep file: 1 CPU and no GPU by default) and is never
retried by Ray: a run that fails is recorded failed and runs again on the next start.

Where the vault goes: the sweep writes a marker file with a random token into OUT. A
task that finds it (OUT is on a file system the node shares) writes the run straight
into ``OUT/runs/<key>/``; one that does not runs in a folder of its own node and
returns the run's folder as a ``.tar.gz`` archive (bytes), which the sweep unpacks under
OUT (``engine.lab.sweep.archive``). Ray is imported only here, when ``--ray`` is given:
without it, one line says how to install it (``pip install 'mudsim[sweep]'``). A
``ray://`` address needs Ray Client (``ray[client]``: gRPC), which the ``sweep`` extra
brings; a Ray installed without it is one line saying so, not Ray's own message.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import secrets
import shutil
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal

from engine.errors import MissingExtraError, UsageError
from engine.lab.sweep.archive import pack, unpack
from engine.lab.sweep.executor import Hooks, Worker, failed
from engine.lab.sweep.run import RunTask, execute_run
from engine.lab.sweep.store import Outcome

MARKER: Final = ".sweep-shared"
POLL_SECONDS: Final = 0.5
NEEDS_RAY: Final = "--ray needs Ray: pip install 'mudsim[sweep]'"
CLIENT: Final = "ray://"


def needs_client(address: str) -> str:
    return (f"--ray {address} needs Ray Client, which this Ray was installed without: "
            "pip install 'mudsim[sweep]' (or pip install 'ray[client]')")  # fmt: skip


def client_missing() -> bool:
    """Whether Ray Client's dependency (gRPC) is missing: Ray asks the same."""
    try:
        importlib.import_module("grpc")
    except ImportError:
        return True
    return False


Sharing = Literal["auto", "never"]


def ray_task(task: RunTask, out: str, token: str, worker: Worker,
             sharing: Sharing) -> tuple[Outcome, bytes | None]:  # fmt: skip
    """On a Ray worker: the run, in OUT when this node sees it, else in a folder of its
    own, returned as an archive."""
    marker = Path(out) / MARKER
    shared = sharing == "auto" and _reads(marker) == token
    if shared:
        return worker(task), None
    scratch = Path(tempfile.mkdtemp(prefix="mudsim-sweep-"))
    try:
        folder = scratch / task.key
        outcome = worker(task.with_folder(folder))
        return outcome, pack(folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _reads(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


class RayExecutor:
    def __init__(self, address: str | None, out: Path, *, cpus: float = 1.0, gpus: float = 0.0,
                 workers: int | None = None, worker: Worker = execute_run,
                 sharing: Sharing = "auto", local_cpus: int | None = None) -> None:  # fmt: skip
        try:
            import ray
        except ImportError as exc:
            raise MissingExtraError(NEEDS_RAY) from exc
        if address and address.startswith(CLIENT) and client_missing():
            raise MissingExtraError(needs_client(address))
        self.ray: Any = ray
        self.address, self.out, self.worker, self.sharing = address, out, worker, sharing
        self.cpus, self.gpus = cpus, gpus
        self.started_here = False
        if not ray.is_initialized():
            self._init(local_cpus)
            self.started_here = True
        available = float(self.ray.cluster_resources().get("CPU", 1.0))
        self.slots = max(1, workers or int(available // cpus) or 1)

    def _init(self, local_cpus: int | None) -> None:
        quiet: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                 "logging_level": logging.ERROR}  # fmt: skip
        try:
            if self.address:
                self.ray.init(address=self.address, **quiet)
            else:
                self.ray.init(num_cpus=local_cpus, **quiet)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local Ray"
            raise UsageError(f"--ray: cannot start or reach {where}: {exc}") from exc

    def run(self, tasks: Sequence[RunTask], hooks: Hooks) -> None:
        ray = self.ray
        token = secrets.token_hex(16)
        marker = self.out / MARKER
        marker.write_text(token, encoding="utf-8")
        remote = ray.remote(num_cpus=self.cpus, num_gpus=self.gpus, max_retries=0)(ray_task)
        waiting = list(reversed(tasks))
        in_flight: dict[Any, RunTask] = {}
        try:
            while waiting or in_flight:
                while waiting and len(in_flight) < self.slots and not hooks.stopping():
                    task = waiting.pop()
                    ref = remote.remote(task, str(self.out), token, self.worker, self.sharing)
                    in_flight[ref] = task
                    hooks.started(task)
                if not in_flight:
                    return
                done, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL_SECONDS)
                for ref in done:
                    task = in_flight.pop(ref)
                    hooks.finished(task, self._outcome(ref, task))
        finally:
            for ref in in_flight:  # a second Ctrl-C, or an error of the sweep's own
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            marker.unlink(missing_ok=True)

    def _outcome(self, ref: Any, task: RunTask) -> Outcome:
        try:
            outcome, archive = self.ray.get(ref)
        except Exception as exc:  # the task's worker died, or Ray could not run it
            return failed(task, f"Ray could not run it: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''}")  # fmt: skip
        if archive is not None:
            try:
                unpack(archive, task.folder)
            except (OSError, ValueError, tarfile.TarError) as exc:
                return failed(task, f"its archive could not be unpacked into {task.folder}: {exc}")
        return outcome  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.started_here:
            self.ray.shutdown()
