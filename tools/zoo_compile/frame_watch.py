"""Which frames dynamo gave up on, the ones upstream's `fallbacks_to_eager` counts.

That count is dynamo's `counters["frames"]["total"] - counters["frames"]["ok"]`: frames its
callback tried to convert and did not. Its compilation metrics name a frame only where an
exception was recorded for it; a frame dynamo skips (a resume function with nothing to compile,
say) is counted and named nowhere. So, while a model compiles, each call of dynamo's frame
converter is watched: a call after which `total` grew and `ok` did not names its frame, and the
frame that called it (a frame of a library's code says little about why it ran: its caller does).

torch without dynamo's ConvertFrame (torch 1.x) has nothing to watch: `start` says so.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Sequence, Tuple

# (function, file's base name, first line, its caller's label or "") of each frame given up, in
# order, since clear()
_given_up: List[Tuple[str, str, int, str]] = []
_watching = False


def start() -> bool:
    """Watches dynamo's frame converter from now on in this process (once); whether it can."""
    global _watching
    if _watching:
        return True
    try:
        from torch._dynamo import convert_frame
        from torch._dynamo.utils import counters
        converter = convert_frame.ConvertFrame
    except (ImportError, AttributeError):
        return False
    original = converter.__call__

    def watched(self, frame, *args, **kwargs):
        total, ok = counters["frames"]["total"], counters["frames"]["ok"]
        try:
            return original(self, frame, *args, **kwargs)
        finally:
            if counters["frames"]["total"] > total and counters["frames"]["ok"] == ok:
                code = frame.f_code
                _given_up.append((code.co_name, os.path.basename(code.co_filename),
                                  code.co_firstlineno, _caller(frame)))

    converter.__call__ = watched
    _watching = True
    return True


def _caller(frame: Any) -> str:
    """Who called the frame: its nearest caller outside dynamo and, where that one is in the
    frame's own file (a library's helper, say typing's), also the nearest outside that file, as
    "helper (typing.py:1250), from forward (model.py:80)"; "" at the top of the stack. The
    frame's f_back where it has one; else (the frame dynamo's callback gets on Python 3.11+ has
    none) the interpreter's stack, which during the callback still ends at the calling frame."""
    code = frame.f_code
    start = getattr(frame, "f_back", None) or sys._getframe(1)
    caller = _first_frame(start, lambda f: f.f_code is not code and not _dynamo_or_watch(f))
    if caller is None:
        return ""
    label = _frame_label(caller)
    if caller.f_code.co_filename == code.co_filename:
        outer = _first_frame(caller, lambda f: f.f_code.co_filename != code.co_filename
                             and not _dynamo_or_watch(f))
        if outer is not None:
            label += f", from {_frame_label(outer)}"
    return label


def _first_frame(frame: Any, wanted) -> Any:
    """The first of frame and its callers that is wanted, or None."""
    while frame is not None and not wanted(frame):
        frame = frame.f_back
    return frame


def _dynamo_or_watch(frame: Any) -> bool:
    """A frame of dynamo's own code or of this watch: the machinery between a frame and its
    caller, never the caller a person is after."""
    filename = frame.f_code.co_filename
    return filename == _caller.__code__.co_filename or f"{os.sep}_dynamo{os.sep}" in filename


def _frame_label(frame: Any) -> str:
    return _label(frame.f_code.co_name, frame.f_code.co_filename, frame.f_lineno)


def clear() -> None:
    _given_up.clear()


def given_up() -> List[Tuple[str, str, int, str]]:
    return list(_given_up)


NO_FAILURE_RECORDED = ("no failure recorded: dynamo skipped the frame (nothing to compile in it, "
                       "or code it does not trace)")


def _label(name: Any, filename: Any, line: Any) -> str:
    return f"{name} ({os.path.basename(str(filename or ''))}:{line})"


def _failure(metric: Any) -> str:
    """A compilation metric's failure, "<type>: <reason>", or "" for a frame it converted."""
    fail_type = getattr(metric, "fail_type", None)
    if not fail_type:
        return ""
    return f"{fail_type}: {getattr(metric, 'fail_reason', '') or ''}".strip()


def named_with_reasons(frames: Sequence[Tuple[str, str, int, str]], metrics: Sequence[Any],
                       limit: int = 20) -> List[Dict[str, str]]:
    """[{frame, reason[, called_from]}] for the given-up frames in order, each (function, file,
    first line, caller or ""): the reason dynamo's compilation metrics record for the same
    function and first line (its exception), else NO_FAILURE_RECORDED, each cut at 300
    characters; the caller where the frame has one."""
    reasons = {}
    for metric in metrics:
        failure = _failure(metric)
        if failure:
            key = (getattr(metric, "co_name", None), getattr(metric, "co_firstlineno", None))
            reasons.setdefault(key, failure)
    named = []
    for name, where, line, caller in frames[:limit]:
        entry = {"frame": _label(name, where, line),
                 "reason": reasons.get((name, line), NO_FAILURE_RECORDED)[:300]}
        if caller:
            entry["called_from"] = caller
        named.append(entry)
    return named


def frames_not_converted(metrics: Sequence[Any], limit: int = 20) -> List[Dict[str, str]]:
    """Without the watch (torch whose dynamo has no ConvertFrame): the frames dynamo's
    compilation metrics record as failed, [{frame, reason}] in the order it met them, each
    reason cut at 300 characters (a frame it skipped without a failure is not among them)."""
    out = []
    for metric in metrics:
        failure = _failure(metric)
        if failure:
            frame = _label(getattr(metric, "co_name", "?"), getattr(metric, "co_filename", ""),
                           getattr(metric, "co_firstlineno", "?"))
            out.append({"frame": frame, "reason": failure[:300]})
    return out[:limit]


def frames_given_up(watched: bool, metrics: Sequence[Any]) -> List[Dict[str, str]]:
    """The frames fallbacks_to_eager counts, as the rows' detail.frames_not_converted: the
    watched ones with their reasons, or (not watched) those the metrics record as failed."""
    return named_with_reasons(given_up(), metrics) if watched else frames_not_converted(metrics)
