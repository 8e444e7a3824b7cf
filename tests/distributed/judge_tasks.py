"""A scripted judge for cluster tests (sent to workers by value): answers by the ``item=`` / ``expect=``
markers of the trace, logs each answer, and can kill the worker process it runs in, once, mid-partition."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from pathlib import Path

from evalkit.judge.providers.base import ProviderReply

_ITEM = re.compile(r"item=([\w.:-]+)")
_EXPECT = re.compile(r"expect=(pass|fail|uncertain)")


class LoggingJudge:
    """A deterministic judge: ``expect=`` decides the result; every answer is appended to ``log``.

    Args:
        log: a file each answer appends ``ITEM PID`` to.
        delay: seconds each call takes.
        victim: the item whose first call kills this process (SIGKILL), after ``linger`` seconds (the
            journal's last batch reaches the disk meanwhile), once: ``marker`` records that it happened.
    """

    name = "fake"
    model = "scripted"
    temperature = 0.0

    def __init__(self, log: str, delay: float = 0.0, victim: str | None = None, marker: str | None = None,
                 linger: float = 0.4) -> None:
        self.log, self.delay, self.victim, self.marker, self.linger = log, delay, victim, marker, linger

    async def complete(self, messages, schema) -> ProviderReply:  # noqa: ANN001 - the provider protocol
        text = messages[1]["content"]
        item = _ITEM.search(text)[1]
        if item == self.victim and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            await asyncio.sleep(self.linger)
            os.kill(os.getpid(), signal.SIGKILL)
        if self.delay:
            await asyncio.sleep(self.delay)
        with open(self.log, "a") as fh:
            fh.write(f"{item} {os.getpid()}\n")
        result = _EXPECT.search(text)[1]
        refs = [{"obs": "m3", "path": "output.content", "value": "300 dollars per pet"}]
        output = {"critique": f"Checked {item} against the criterion.", "refs": refs, "assumptions": [],
                  "result": result, "confidence": 0.8,
                  "blockedBy": {"kind": "normative", "text": "unclear"} if result == "uncertain" else None}
        return ProviderReply(text=json.dumps(output), input_tokens=50 + len(item), output_tokens=9, mode="scripted")

    async def aclose(self) -> None:
        """Nothing to release."""


def logging_judge(**kwargs) -> LoggingJudge:  # noqa: ANN003
    """The provider factory a :class:`~evalkit.distributed.JudgeJob` calls in each worker."""
    return LoggingJudge(**kwargs)
