"""The locks of a zoo shared by several runs (docs/formats.md, "A zoo shared by several runs").

Several processes write one zoo at a time: the partitions of a list, two users, the exporter
started twice, a run's model processes exporting their recipes. They agree through flock(2)
locks on files that are created on first use and never deleted (deleting a lock file while a
process waits on it would let a third process lock a new file of the same name beside it):

  <zoo>/.locks/<suite>/<model>.export.lock   held exclusively for the whole export of the model:
        its staging folder, the build, the move into <zoo>/<suite>/<model>/ and its index.json
        entry. A process that finds it taken waits (and says so in its log); once it has it, a
        model that another process finished meanwhile is not exported again.
  <zoo>/.locks/<suite>/<model>.use.lock      held shared by a run (the C++ harness) while a job
        uses the model. `zoobench run --zoo-max-gb` deletes a model folder only after taking
        this lock and the export lock exclusively without waiting; a model in use or being
        exported is passed over.
  <zoo>/index.json.lock                      held exclusively around every read-modify-write of
        index.json (manifest.record_in_index).

Staging folders are per process, <zoo>/.staging/<suite>/<model>.<pid>.partial (and .old), so
that no process removes another's work; the leftover of a dead process is removed by the next
exporter of that model while it holds the export lock.

Order: a process takes a model's export lock before the device gate (zoo_compile.device_gate),
never the other way round, except a model's own process exporting its recipe, which holds the
gate already and whose export never waits for the gate again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from typing import Callable, Iterator, Optional

LOCKS = ".locks"


def lock_path(zoo: str, suite: str, name: str, purpose: str) -> str:
    """<zoo>/.locks/<suite>/<name>.<purpose>.lock (purpose: export or use)."""
    return os.path.join(zoo, LOCKS, suite, f"{name}.{purpose}.lock")


@contextlib.contextmanager
def held_exclusively(path: str,
                     on_wait: Optional[Callable[[str], None]] = None) -> Iterator[None]:
    """flock(LOCK_EX) on `path` (created with its folders, never deleted) for the block. When
    another process holds it, calls on_wait(path) once and waits. The lock goes with the
    descriptor: when the block ends, or when the process dies."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait(path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def export_lock(zoo: str, suite: str, name: str,
                emit: Callable[[str], None]) -> contextlib.AbstractContextManager:
    """The model's export lock, with a line in the log while it waits (an export that pauses
    for minutes behind another process's export of the same model says why)."""
    def waiting(path: str) -> None:
        emit(f"    {suite}/{name}: waiting for {path}: another process is exporting this model")

    return held_exclusively(lock_path(zoo, suite, name, "export"), waiting)


def process_alive(pid: int) -> bool:
    """Whether a process of this id exists on this machine (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
