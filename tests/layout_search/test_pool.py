"""The pool's helpers are kept busy: a reply is read (``done``) by the pool's results thread
while the worker sends its helper the next job, and a reply that cannot be read fails its
candidate in words instead of stopping the search. With a stand-in target (no compiler)."""

from __future__ import annotations

import threading
from typing import Any

from shardwidget.layout_search.pool import Job, Pool


class _Helper:
    alive = True

    def stop(self) -> None:
        self.alive = False


class _Target:
    """Answers each job at once, and notes when each request began."""

    def __init__(self) -> None:
        self.key = ("stand-in", id(self))
        self.asked: dict[str, threading.Event] = {}

    def new_helper(self) -> _Helper:
        return _Helper()

    def request(self, h: _Helper, text: str, mesh: Any, limit: float) -> dict[str, Any]:
        self.asked.setdefault(text, threading.Event()).set()
        return {"text": text}


def test_the_next_compile_is_sent_while_a_reply_is_read() -> None:
    target = _Target()
    target.asked["second"] = threading.Event()
    seen: dict[str, bool] = {}

    def done(job: Job, reply: dict[str, Any] | None, why: str, t0: float) -> None:
        if job.text == "first":  # a slow read: the one helper is asked for the second meanwhile
            seen["second sent during the first's read"] = target.asked["second"].wait(5.0)

    pool = Pool(target, 1, None, done)  # type: ignore[arg-type]  # (a stand-in target)
    pool.put(Job("first", None, None))
    pool.put(Job("second", None, None))
    pool.close()
    pool.join(30.0)
    assert not pool.running
    assert seen == {"second sent during the first's read": True}


def test_a_reply_that_cannot_be_read_fails_its_candidate_in_words() -> None:
    calls: list[tuple[str, bool, str]] = []

    def done(job: Job, reply: dict[str, Any] | None, why: str, t0: float) -> None:
        calls.append((job.text, reply is not None, why))
        if reply is not None and job.text == "bad":
            raise KeyError("hlo")

    pool = Pool(_Target(), 1, None, done)  # type: ignore[arg-type]  # (a stand-in target)
    for text in ("bad", "good"):
        pool.put(Job(text, None, None))
    pool.close()
    pool.join(30.0)
    assert calls == [
        ("bad", True, ""),
        ("bad", False, "its reply could not be read (KeyError: 'hlo')"),
        ("good", True, ""),
    ]
