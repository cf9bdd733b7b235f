"""A run's folder as a ``.tar.gz`` archive, for a Ray node that cannot write into OUT.

``pack`` makes the archive (paths relative to the folder). ``unpack`` extracts it with
tarfile's ``data`` filter (no absolute paths, no ``..``, no links out, no device files)
into a sibling folder, then renames that into place, so OUT never holds half a run.
"""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path


def pack(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    """Extract ``data`` as ``folder`` (which must not exist yet)."""
    if folder.exists():
        raise ValueError(f"{folder} is already there")
    landing = folder.with_name(f"{folder.name}.unpacking")
    shutil.rmtree(landing, ignore_errors=True)
    landing.mkdir(parents=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            archive.extractall(landing, filter="data")
        landing.rename(folder)
    except BaseException:
        shutil.rmtree(landing, ignore_errors=True)
        raise
