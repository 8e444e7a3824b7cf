"""Handing a change request to the remedy command and reading its reply.

The remedy command is whoever builds the agent: a person's script, a coding agent, anything. evalkit
writes the request (canonical JSON, validated), runs the argv without a shell in the subject's folder
with ``{request}``, ``{response}``, ``{swing}`` and ``{python}`` filled in, and reads the response file
back against the ``ChangeRequestResponse`` contract. A crash, a hang past ``timeout_s``, a missing or
invalid response, or a reply to another request is a :class:`RemedyOutcome` with a failure kind and the
reason: recorded by the loop as its stop reason, never raised.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.contracts.edd import ChangeRequestResponse, EddChangeRequest
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps
from evalkit.processes import output_tail, run_in_own_group


@dataclass(frozen=True)
class RemedyOutcome:
    """What came of one request: the response, or why there is none.

    ``failure`` is None (a valid response), ``crashed`` (non-zero exit or could not start), ``timeout``,
    or ``invalid-response`` (missing file, not JSON, not the contract, another request's id).
    """

    response: ChangeRequestResponse | None
    failure: str | None = None
    reason: str | None = None
    exit_code: int | None = None
    stderr_tail: str | None = None


def write_request(path: str | Path, request: EddChangeRequest) -> None:
    """Write a change request as canonical JSON, atomically."""
    atomic_write_text(path, canonical_dumps(request.to_json_obj()))


def read_response(path: str | Path, request_id: str) -> RemedyOutcome:
    """The response file read against the contract and the request it must answer."""
    from evalkit.contract_files import read_model

    if not Path(path).is_file():
        return RemedyOutcome(None, "invalid-response", f"the remedy wrote no response file ({path})")
    try:
        response = read_model(path, ChangeRequestResponse)
    except InputError as exc:
        return RemedyOutcome(None, "invalid-response", exc.render())
    if response.request_id != request_id:
        return RemedyOutcome(None, "invalid-response",
                             f"{path}: requestId {response.request_id!r} answers another request "
                             f"(expected {request_id!r})")
    return RemedyOutcome(response)


def fill(argv: Sequence[str], *, request: Path, response: Path, swing: int) -> list[str]:
    """The argv with its placeholders filled in (validated by ``EddSettings``)."""
    values = {"request": str(request), "response": str(response), "swing": str(swing), "python": sys.executable}
    return [arg.format(**values) for arg in argv]


def run_remedy(argv: Sequence[str], request: EddChangeRequest, request_file: Path, response_file: Path, *,
               cwd: Path, timeout_s: float) -> RemedyOutcome:
    """Write the request, run the remedy command on it, and read its response.

    Args:
        argv: the remedy command, with placeholders.
        request: the change request (written to ``request_file``).
        request_file, response_file: the files the command reads and writes (a stale response is removed).
        cwd: the folder the command runs in (the subject's).
        timeout_s: after this the command's whole process group is killed.
    """
    write_request(request_file, request)
    if response_file.exists():
        response_file.unlink()
    cmd = fill(argv, request=request_file, response=response_file, swing=request.swing)
    try:  # in its own process group: on a timeout what the remedy started dies too
        done = run_in_own_group(cmd, cwd=cwd, timeout=timeout_s, capture_stdout=False)
    except OSError as exc:
        return RemedyOutcome(None, "crashed", f"cannot start the remedy command {cmd[0]!r}: {exc.strerror or exc}")
    err = done.stderr
    if done.timed_out:
        return RemedyOutcome(None, "timeout", f"the remedy command ran past its timeout of {timeout_s:g}s",
                             stderr_tail=output_tail(err))
    if done.returncode != 0:
        return RemedyOutcome(None, "crashed", f"the remedy command exited with {done.returncode}",
                             exit_code=done.returncode, stderr_tail=output_tail(err))
    outcome = read_response(response_file, request.request_id)
    return outcome if outcome.response is not None else RemedyOutcome(
        None, outcome.failure, outcome.reason, exit_code=0, stderr_tail=output_tail(err))
