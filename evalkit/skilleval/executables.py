"""The executables a run may start: each bound once to an absolute path and its sha256, never looked up again.

The seed's rule: invoke each bound executable directly; never resolve an unverified same-name program
through ``PATH``. A program is bound at the start of the run from ``--bin NAME=PATH`` only (a program not
given is refused: the first ``tasknote`` on ``PATH`` may be an impostor), its symlinks resolved, so the
file digested is the file run. Before every command the file is digested again: a binary swapped during
the run refuses the command.

Commands run as argv vectors (never through a shell: ``;``, ``|`` or ``$(...)`` stay literal arguments),
in a process group of their own that a timeout kills whole, with the environment scrubbed to
:func:`scrubbed_env`'s allow-list.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import InputError
from evalkit.processes import Finished, run_in_own_group
from evalkit.skilleval.confine import confined_argv
from evalkit.skilleval.digest import file_sha256

FIXED_DATE = "2000-01-01T00:00:00+00:00"
"""Author and committer date of every commit made in a sandbox, so Git object ids are reproducible."""

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "evalkit skill-eval", "GIT_AUTHOR_EMAIL": "skill-eval@example.invalid",
                "GIT_COMMITTER_NAME": "evalkit skill-eval", "GIT_COMMITTER_EMAIL": "skill-eval@example.invalid",
                "GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}

GIT_CONFIG = {"init.defaultBranch": "main", "commit.gpgSign": "false", "tag.gpgSign": "false",
              "core.autocrlf": "false", "advice.detachedHead": "false", "safe.directory": "*",
              "core.hooksPath": os.devnull, "core.fsmonitor": "false", "gc.auto": "0", "maintenance.auto": "false"}
"""Git settings every sandbox command sees, whatever the user's, the system's or the repository's Git
configuration says (these come from the environment, which outranks every configuration file). Hooks
are looked up below ``/dev/null``, where no file can ever be: a fixture's or an action's hook never runs.
No automatic gc or maintenance: a detached ``git gc`` would repack the sandbox while its evidence is
digested (a file gone mid-digest) and outlive the arm."""


@dataclass(frozen=True)
class BoundExecutable:
    """A program name bound to one absolute, symlink-free path and the sha256 of that file."""

    name: str
    path: Path
    sha256: str
    interpreter: Path | None = None
    """For a script starting ``#!/usr/bin/env NAME``: the interpreter NAME resolved once when the script was
    bound (on the PATH of the run's caller), so the scrubbed PATH can hold its folder and the script runs
    on any machine, wherever its interpreter is installed (``/usr/bin`` or ``/usr/local/bin``)."""

    def verify(self) -> None:
        """Digest the file again; raise when it changed or vanished since it was bound.

        Raises:
            InputError: the file is gone or its bytes differ.
        """
        try:
            now = file_sha256(self.path)
        except InputError as exc:
            raise InputError(f"executable {self.name!r} can no longer be read: {exc.message}",
                                    file=str(self.path)) from None
        if now != self.sha256:
            raise InputError(f"executable {self.name!r} changed since it was bound (sha256 {self.sha256} "
                                    f"at the start, {now} now); rerun with the intended binary", file=str(self.path))


def parse_bindings(values: Iterable[str], option: str = "--bin") -> dict[str, str]:
    """``NAME=PATH`` option values as a dict; a malformed or repeated name is an InputError."""
    out: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise InputError(f"{option}: expected NAME=PATH, got {value!r}")
        if name in out:
            raise InputError(f"{option}: {name!r} is given twice")
        out[name] = path
    return out


def bind(name: str, given: str | None, option: str = "--bin") -> BoundExecutable:
    """Bind one program to the file given for it (never looked up on ``PATH``).

    Raises:
        InputError: no file given, not found, not an executable regular file.
    """
    if given is None:
        raise InputError(f"executable {name!r} is not given: evalkit never looks a program up on PATH (a same-named "
                         f"impostor could come first); give {option} {name}=/path/to/{name}", path=option)
    path = Path(os.path.realpath(Path(given).expanduser()))
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise InputError(f"executable {name!r}: {exc.strerror or exc}", file=str(given)) from None
    if not stat.S_ISREG(mode) or not os.access(path, os.X_OK):
        raise InputError(f"executable {name!r} is not an executable regular file", file=str(given))
    return BoundExecutable(name, path, file_sha256(path), _env_interpreter(path))


def _env_interpreter(path: Path) -> Path | None:
    """The interpreter of a ``#!/usr/bin/env NAME`` script, resolved now; None for anything else."""
    with path.open("rb") as f:
        first = f.readline(256)
    if not first.startswith(b"#!"):
        return None
    parts = first[2:].decode("utf-8", "replace").split()
    if len(parts) < 2 or Path(parts[0]).name != "env" or parts[1].startswith("-"):
        return None
    found = shutil.which(parts[1])
    return Path(os.path.realpath(found)).parent if found else None


def bind_all(names: Iterable[str], given: Mapping[str, str], option: str = "--bin") -> dict[str, BoundExecutable]:
    """Bind every program a policy allows; ``given`` may only name those programs."""
    wanted = sorted(set(names))
    unknown = sorted(set(given) - set(wanted))
    if unknown:
        raise InputError(f"{option}: {', '.join(unknown)} is not a program the policy allows ({', '.join(wanted)})")
    missing = [name for name in wanted if name not in given]
    if missing:
        raise InputError(f"no file given for {', '.join(missing)}; evalkit never looks a program up on PATH "
                         f"(a same-named impostor could come first): give {' '.join(f'{option} {n}=PATH' for n in missing)}",
                         path=option)
    return {name: bind(name, given[name], option) for name in wanted}


def scrubbed_env(bound: Iterable[BoundExecutable], home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment a sandbox command gets: nothing is inherited but ``extra``.

    ``PATH`` holds only the folders of the bound programs (so a program one of them starts finds its
    bound sibling), then the folders of the interpreters their ``#!/usr/bin/env`` lines name (resolved when
    they were bound), ``HOME`` is the sandbox, text is UTF-8 in the C locale, time is UTC, and Git runs
    with a fixed identity, fixed dates and :data:`GIT_CONFIG` (no system or user configuration).
    """
    folders: list[str] = []
    for executable in sorted(bound, key=lambda b: b.name):
        folder = str(executable.path.parent)
        if folder not in folders:
            folders.append(folder)
    for executable in sorted(bound, key=lambda b: b.name):
        if executable.interpreter is not None and str(executable.interpreter) not in folders:
            folders.append(str(executable.interpreter))
    # The global Git config is a file in HOME, the sandbox: `git config --global` writes there, in view of
    # the facts, never into the caller's ~/.gitconfig (nor, through a lock file, over /dev/null)
    env = {"PATH": os.pathsep.join(folders), "HOME": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "TZ": "UTC", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(Path(home) / ".gitconfig"),
           "GIT_TERMINAL_PROMPT": "0",
           "GIT_OPTIONAL_LOCKS": "0", **GIT_IDENTITY, "GIT_CONFIG_COUNT": str(len(GIT_CONFIG))}
    for i, (key, value) in enumerate(GIT_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env.update(extra or {})
    return env


def run_bound(executable: BoundExecutable, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
              timeout: float, confine_to: Path | None = None) -> Finished:
    """Run ``argv`` with its program replaced by the bound absolute path, after re-checking its digest.

    No shell is involved: every element of ``argv`` reaches the program as one literal argument.
    stdin is empty. On timeout the whole process group is killed and ``timed_out`` is set. With
    ``confine_to``, where the machine allows it (:func:`~evalkit.skilleval.confine.confinement`), the
    command runs in a private mount namespace where only that folder (and a private ``/tmp``) is writable.

    Raises:
        InputError: the bound file changed since it was bound, or the program cannot be started.
    """
    executable.verify()
    command = [str(executable.path), *argv[1:]]
    if confine_to is not None:
        command = confined_argv(executable.path, list(argv), confine_to) or command
    try:
        done = run_in_own_group(command, cwd=cwd, env=env, timeout=timeout)
    except OSError as exc:
        raise InputError(f"cannot start {executable.name!r}: {exc.strerror or exc}", file=str(executable.path)) from None
    return done
