"""The local judge's server wrapper: a build that would crash is refused, a server that crashes is reported
with its own last words, and the exit code says so. The server here is a stand-in for llama.cpp's (a
``llama_cpp.server`` module first on the path) that crashes as the AMX build did: a general protection fault
on a chat request."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.judge.local_server import PORTABLE_BUILD, amx_problem, local_judge_server, main

FAKE_SERVER = textwrap.dedent('''
    import argparse, http.server, json, os, signal, sys
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    args, _ = parser.parse_known_args()
    crash_on = int(os.environ["FAKE_CRASH_ON"])
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"data": [{"id": "smollm2-135m"}]}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append(1)
            if len(seen) >= crash_on:
                print("ggml_backend_amx_mul_mat: general protection fault (ldtilecfg)", file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGSEGV)
            body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "OK"}}]}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)

    print("fake llama.cpp server up", flush=True)
    http.server.HTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
''')


@pytest.fixture
def fake(tmp_path, monkeypatch):
    package = tmp_path / "fake" / "llama_cpp" / "server"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "__main__.py").write_text(FAKE_SERVER, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    return model


def test_an_amx_build_is_refused_where_the_kernel_has_no_amx() -> None:
    info = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | OPENMP = 1 |"
    problem = amx_problem(info, "fpu sse2 avx2 avx512f")
    assert problem is not None and "built with AMX" in problem and PORTABLE_BUILD in problem
    assert amx_problem(info, "fpu avx2 amx_tile amx_int8") is None  # the kernel enables it: fine
    assert amx_problem("CPU : SSE3 = 1 | AVX2 = 1 | FMA = 1 |", "fpu avx2") is None  # the portable build


@pytest.mark.slow
def test_a_server_that_crashes_on_its_first_request_fails_before_the_command(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CRASH_ON", "1")
    log = tmp_path / "server.log"
    with pytest.raises(InputError) as info, local_judge_server(fake, log=log, startup_timeout=60):
        pass
    message = info.value.render()
    assert "llama.cpp server died (exit code -11) on its first request" in message
    assert "general protection fault" in message and log.exists()  # its own words, and the log is kept


@pytest.mark.slow
def test_a_server_that_dies_during_the_command_is_reported_and_the_exit_code_is_not_0(fake, tmp_path, monkeypatch,
                                                                                      capsys):
    monkeypatch.setenv("FAKE_CRASH_ON", "2")  # the one-token check passes; the command's first call kills it
    log = tmp_path / "server.log"
    command = [sys.executable, "-c", "import sys, time, urllib.request as u\n"
               "try:\n u.urlopen(u.Request(sys.argv[1] + '/chat/completions', data=b'{}', "
               "headers={'Content-Length': '2'}), timeout=30)\nexcept OSError: pass\ntime.sleep(1.5)",
               "{base_url}"]
    code = main(["--model", str(fake), "--log", str(log), "--", *command])
    err = capsys.readouterr().err
    assert code != 0
    assert "the llama.cpp server died (killed by signal SIGSEGV)" in err and str(log) in err
    assert "general protection fault" in err
    assert Path(log).exists()
