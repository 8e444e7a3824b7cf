"""Run one sandbox command with every file system outside its sandbox read-only (a private mount namespace).

A bound command (an arm's setup or action, the agent, a Git status digest) is started as::

    unshare --mount --propagation private PYTHON -I -S confine.py SANDBOX -- PROGRAM ARG...

Inside the new mount namespace this file, standard library only (the scrubbed environment has no
``PYTHONPATH``), binds ``SANDBOX`` onto itself and remounts every other mount read-only, ``/tmp``
included (device nodes stay usable: a read-only mount still lets ``/dev/null`` be written), and
then executes the program in place, with the same environment and working folder. Nothing the command
does can then write outside its sandbox; the host's mounts are untouched (the namespace is private).

:func:`confinement` says whether this machine allows it (``unshare`` present and permitted, e.g. as root
or with user namespaces); when it does not, commands run unconfined and the report says so.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


def _mount(libc: ctypes.CDLL, source: str, target: str, fstype: str | None, flags: int) -> int:
    return libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags, None)


def _mount_points() -> list[str]:
    """Every mount point of this namespace, from /proc/self/mountinfo (octal escapes decoded)."""
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for line in fh:
            field = line.split()[4]
            points.append(field.encode().decode("unicode_escape").encode("latin-1").decode("utf-8", "replace"))
    return points


def confine(writable: str) -> None:
    """In a fresh private mount namespace: keep ``writable`` writable and make everything else read-only.

    Raises:
        OSError: a mount call failed (the command must then not run).
    """
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> None:
        if result != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")

    cwd = os.getcwd()
    check(_mount(libc, "none", "/", None, _MS_REC | _MS_PRIVATE), "make mounts private")
    check(_mount(libc, writable, writable, None, _MS_BIND | _MS_REC), f"bind {writable}")
    keep = (writable.rstrip("/") or "/",)
    for point in sorted(set(_mount_points())):
        if any(point == k or point.startswith(k.rstrip("/") + "/") for k in keep):
            continue
        if point in ("/proc", "/sys") or point.startswith(("/proc/", "/sys/")):
            continue  # kernel views; /proc/sys and friends are read-only to an unprivileged writer already
        # one failing remount (a mount that is read-only already, or locked) leaves it as it was: still no write
        _mount(libc, "none", point, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
    # the root itself must have become read-only, or the command would run unconfined
    if not _read_only("/"):
        raise OSError(0, "the root file system is still writable inside the namespace")
    os.chdir(cwd)  # the same path, now through the writable mount


def _read_only(path: str) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


@cache
def confinement() -> str | None:
    """The ``unshare`` program when this machine can confine a command, else None (checked once)."""
    unshare = shutil.which("unshare", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if unshare is None or not sys.platform.startswith("linux"):
        return None
    probe = subprocess.run([unshare, "--mount", "--propagation", "private", sys.executable, "-I", "-S", __file__,
                            "/tmp", "--", "/bin/true" if os.path.exists("/bin/true") else shutil.which("true") or "true"],
                           capture_output=True, timeout=30, check=False, env={"PATH": "/usr/bin:/bin"})
    return unshare if probe.returncode == 0 else None


def confined_argv(program: Path, argv: list[str], writable: Path) -> list[str] | None:
    """The argv that runs ``program`` (with ``argv[1:]``) confined to ``writable``, or None when not possible."""
    unshare = confinement()
    if unshare is None:
        return None
    return [unshare, "--mount", "--propagation", "private", sys.executable, "-I", "-S", str(Path(__file__).resolve()),
            str(Path(writable).resolve()), "--", str(program), *argv[1:]]


def main(args: list[str]) -> None:
    """``confine.py WRITABLE -- PROGRAM ARG...``: confine, then become the program."""
    writable, separator, program = args[0], args[1], args[2:]
    if separator != "--" or not program:
        sys.exit("usage: confine.py WRITABLE -- PROGRAM ARG...")
    try:
        confine(writable)
    except OSError as exc:
        sys.stderr.write(f"evalkit confine: {exc}\n")
        sys.exit(125)
    os.execv(program[0], program)


if __name__ == "__main__":
    main(sys.argv[1:])
