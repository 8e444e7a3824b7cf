"""A finished notebook's kernel is shut down without SIGINT, which ipykernel reported as an error mid-run."""

from __future__ import annotations

import asyncio
import signal
import threading

from evalkit.pipeline import _quiet_shutdown_kernel_manager


def _signals(shutting_down: bool) -> list[int]:
    manager = _quiet_shutdown_kernel_manager()(kernel_name="python3")
    sent: list[int] = []

    async def record(signum: int) -> None:
        sent.append(signum)

    manager._async_signal_kernel = record  # what an interrupt in signal mode sends
    manager._kernel_spec = type("Spec", (), {"interrupt_mode": "signal"})()
    manager.provisioner = type("Provisioner", (), {"has_process": True})()  # a kernel is running
    manager.shutting_down = shutting_down
    # in a thread of its own: a notebook test earlier in the session may leave this thread's loop running
    worker = threading.Thread(target=asyncio.run, args=(manager._async_interrupt_kernel(),))
    worker.start()
    worker.join()
    return sent


def test_an_idle_kernel_being_shut_down_gets_no_interrupt():
    assert _signals(shutting_down=True) == []


def test_an_interrupt_at_any_other_time_is_sent():
    assert _signals(shutting_down=False) == [signal.SIGINT]
