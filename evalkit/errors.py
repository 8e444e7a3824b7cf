"""Every error evalkit raises on purpose, in one place, each saying what to do next.

Two families. :class:`InputError` and its kinds are about what the user gave evalkit (a file, an
option, a check's parameters): they name the file, the line or record and the field, and the command
line prints them as ``FILE[:LINE]: field.path: message`` with exit code 1. The others
(:class:`TestSetAlreadyMeasured`, :class:`SampleContractError`) refuse an action that would spoil a
measurement or reveal a bug in evalkit itself. :class:`ProviderError` and its kinds are a judge
provider's failed calls, sorted by what the runner does next. Each docstring says what to do.

This module imports nothing from the rest of evalkit, so any layer may raise these.
"""

from __future__ import annotations

import re
from typing import Literal

ECHO_LIMIT = 200
"""Characters of one word (a run without spaces: an id, a value, a key) an error echoes; a longer one is
cut, saying how long it was, so a 10 MB id gives a one-line error rather than 10 MB on stderr."""


def capped(text: str) -> str:
    """``text`` with every word longer than :data:`ECHO_LIMIT` cut to its start and its length."""
    if len(text) <= ECHO_LIMIT:
        return text
    return re.sub(rf"\S{{{ECHO_LIMIT + 1},}}",
                  lambda m: f"{m.group(0)[:ECHO_LIMIT // 2]}... ({len(m.group(0)):,} characters)", text)


class InputError(ValueError):
    """Bad input, located precisely enough for a user to fix it.

    Rendered as ``FILE[:LINE]: field.path: message`` (parts that are unknown are left out).
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 path: str | None = None) -> None:
        self.message = capped(message)
        self.file = file
        self.line = line
        self.path = None if path is None else capped(path)
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [p for p in (where, self.path) if p]
        return ": ".join([*parts, self.message])

    def located(self, *, file: str | None = None, line: int | None = None) -> InputError:
        """The same error with the file (and line) filled in where still unknown."""
        return InputError(self.message, file=self.file or file,
                          line=self.line if self.line is not None else line, path=self.path)


class StrictJSONError(InputError):
    """A JSON text that is not plain, unambiguous JSON (a byte-order mark, a duplicate key, trailing data, NaN).

    What to do: fix the file at the line and column named; evalkit never guesses which duplicate wins.
    """


class UnknownTraceFormat(InputError):
    """A trace file no trace format fits (the message names the formats tried).

    What to do: pass ``--format`` to say which it is, install the plug-in that reads it, or, importing many
    files at once, ``--skip-invalid`` to leave it out (counted in the import report).
    """


class CheckError(InputError):
    """A code check that cannot run as configured: unknown primitive, missing or bad parameter.

    What to do: fix the check's parameters in the eval matrix at the field named; ``evalkit validate``
    on the matrix and ``docs/checks.md`` list the primitives and their parameters.
    """


class RoutingError(CheckError):
    """A criterion the router cannot place: unknown check method, a code track without a check, an id used twice.

    What to do: give the criterion a known ``checkMethod`` (and a ``check`` when it is a code check),
    or rename the duplicate id, in the eval matrix.
    """


class AppendOnlyViolation(InputError):
    """A write would drop or rewrite cases the suite file already has, or lower its version.

    What to do: add cases instead of editing them; to retire a case, give the suite a new version
    (a new file) rather than rewriting history that measurements refer to.
    """


class TooManyTuples(InputError):
    """The cartesian product of a suite's dimensions is larger than the cap (the count is in the message).

    What to do: narrow the dimensions (fewer values, or fewer dimensions crossed at once), or pass a
    larger ``cap`` deliberately when every tuple really is wanted.
    """


class TestSetAlreadyMeasured(RuntimeError):
    """The test split was already measured for this criterion and judge prompt.

    What to do: report the measurement already in the ledger; to measure again honestly, change the
    judge (a new prompt digest) or label a fresh test split, and iterate on the dev split meanwhile.
    """

    __test__ = False  # not a pytest test class


class SampleContractError(RuntimeError):
    """A generated sample file does not satisfy its contract: a bug in the generator, never in user input.

    What to do: fix the generator in ``evalkit/sample_subject/`` (the message names the file, record
    and contract), then regenerate with ``python -m evalkit.sample_subject``.
    """


TransientKind = Literal["rate-limit", "server", "connection", "timeout"]


class ProviderError(Exception):
    """A judge provider's call failed, in words a user can act on (the kinds below say what to do)."""


class TransientError(ProviderError):
    """A failure worth retrying (429, 5xx, connection, timeout); ``retry_after`` is the server's ``Retry-After``.

    What to do: nothing; the runner retries with backoff. If it keeps happening, lower the concurrency
    or run again later: finished calls are cached, so a rerun only pays for the rest.
    """

    def __init__(self, message: str, *, kind: TransientKind, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class CallError(ProviderError):
    """This item's call cannot succeed as sent (HTTP 400, 413, 422): an error row, the run goes on.

    What to do: read the error row; usually the trace is too long for the model or the prompt was refused.
    """


class FatalError(ProviderError):
    """No call can succeed (HTTP 401, 403, 404): the run stops before the next call.

    What to do: check the API key, the model name and the base URL in the judge's pin.
    """


class MissingCredential(ProviderError):
    """The environment variable holding a key (a judge provider's, Langfuse's) is not set; nothing was sent.

    What to do: export the variable the message names (for a judge, or replay recorded calls instead).
    """


def require_credential(variable: str, *, needed_by: str, hint: str = "") -> str:
    """The value of the environment variable ``variable``, which holds a key ``needed_by`` needs.

    Raises:
        MissingCredential: the variable is unset or empty; the message is one line naming it.
    """
    import os

    value = os.environ.get(variable, "").strip()
    if not value:
        raise MissingCredential(f"{variable} is not set: {needed_by} needs it{hint}")
    return value


__all__ = [
    "AppendOnlyViolation",
    "CallError",
    "CheckError",
    "FatalError",
    "InputError",
    "MissingCredential",
    "require_credential",
    "ProviderError",
    "RegistryInvalid",
    "RoutingError",
    "SampleContractError",
    "StrictJSONError",
    "TestSetAlreadyMeasured",
    "TooManyTuples",
    "TransientError",
    "TransientKind",
]


class RegistryInvalid(InputError):
    """A skill-eval registry (or its policy) breaks rules; ``problems`` holds every one, not the first only.

    Each problem is an :class:`InputError` naming its file (and line) and member path. Rendered as a
    count followed by one ``FILE[:LINE]: member.path: message`` line per problem.

    What to do: fix each problem where it is named, then run ``evalkit skill-eval validate REGISTRY`` again.
    """

    def __init__(self, problems: list[InputError], *, file: str | None = None) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        super().__init__(f"{count} problem{'' if count == 1 else 's'} in the skill-eval registry", file=file)

    def render(self) -> str:
        return "\n".join([super().render(), *(f"  {p.render()}" for p in self.problems)])
