"""Running an agent command on cases: crashes, hangs and garbage become errored runs; the env is scrubbed."""

import json
import textwrap
import time

import pytest
import yaml
from pydantic import ValidationError

from evalkit.contracts.subject import AgentCommand, Subject
from evalkit.suite import new_case, run_cases, run_subject, scrubbed_env

CASES = [new_case({"intent": "order_status"}, "Where is order ORD-2026-123456?", "seed"),
         new_case({"intent": "complaint"}, "Your courier was rude.", "seed")]

GOOD_AGENT = """
import json, os, sys
case = json.load(open(sys.argv[1]))
trace = {"id": "whatever-the-agent-likes", "input": case["query"], "output": "ok",
         "metadata": {"env": sorted(os.environ)}, "observations": []}
open(sys.argv[2], "w").write(json.dumps(trace) + "\\n")
"""


def _agent(tmp_path, name, source, timeout_s=20.0, env=()):
    script = tmp_path / f"{name}.py"
    script.write_text(textwrap.dedent(source))
    return AgentCommand(command=["{python}", str(script), "{case}", "{out}"], timeout_s=timeout_s, env=list(env))


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_good_agent_run_is_linked_to_its_case_and_repeat(tmp_path):
    agent = _agent(tmp_path, "good", GOOD_AGENT)
    outcome = run_cases(agent, CASES, tmp_path / "out", cwd=tmp_path, repeats=2, env={"PATH": "/usr/bin:/bin"})
    assert outcome.counts() == {"ok": 4, "error": 0, "timeout": 0}
    traces = _lines(outcome.traces_file)
    assert [t["id"] for t in traces] == [f"{CASES[0].id}-r1", f"{CASES[0].id}-r2", f"{CASES[1].id}-r1",
                                         f"{CASES[1].id}-r2"]
    first = traces[0]["metadata"]
    assert (first["caseId"], first["repeat"], first["agentTraceId"]) == (CASES[0].id, 1, "whatever-the-agent-likes")
    assert traces[2]["input"] == "Your courier was rude."
    runs = _lines(outcome.runs_file)
    assert runs[0] == {"caseId": CASES[0].id, "exitCode": 0, "repeat": 1, "status": "ok",
                       "traceId": f"{CASES[0].id}-r1"}


@pytest.mark.slow
def test_crash_timeout_and_garbage_are_errored_runs_never_dropped(tmp_path):
    crash = _agent(tmp_path, "crash", "import sys\nsys.stderr.write('Traceback: model quota exceeded\\n')\n"
                                      "sys.exit(3)\n")
    out = run_cases(crash, CASES[:1], tmp_path / "crash", cwd=tmp_path)
    assert [r.to_json_obj() for r in out.runs] == [{
        "caseId": CASES[0].id, "exitCode": 3, "reason": "exited with code 3", "repeat": 1, "status": "error",
        "stderrTail": "Traceback: model quota exceeded\n"}]
    assert out.traces == [] and out.traces_file.read_text() == ""
    assert len(_lines(out.runs_file)) == 1

    hang = _agent(tmp_path, "hang", "import subprocess, sys, time\n"
                                    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                                    "print('thinking...', file=sys.stderr, flush=True)\ntime.sleep(60)\n",
                  timeout_s=1.5)
    started = time.monotonic()
    out = run_cases(hang, CASES, tmp_path / "hang", cwd=tmp_path, concurrency=2)
    assert time.monotonic() - started < 15  # killed, child included (it would hold stderr open for 60 s)
    assert [(r.status, r.reason) for r in out.runs] == [("timeout", "no exit within 1.5 s; killed")] * 2
    assert out.runs[0].stderr_tail == "thinking...\n"

    garbage = _agent(tmp_path, "garbage", "import sys\nprint('}}} not a trace {{{')\n"
                                          "open(sys.argv[2], 'w').write('<<garbage>> not json\\n')\n")
    out = run_cases(garbage, CASES[:1], tmp_path / "garbage", cwd=tmp_path)
    (run,) = out.runs
    assert run.status == "error" and run.exit_code == 0
    assert run.reason.startswith("unreadable trace: ") and "trace.jsonl:1" in run.reason

    silent = _agent(tmp_path, "silent", "print('{\"id\": \"t\", \"observations\": []}')\n")
    (run,) = run_cases(silent, CASES[:1], tmp_path / "silent", cwd=tmp_path).runs
    assert (run.status, run.reason) == ("error", "exited 0 but wrote no trace to {out}")

    two = _agent(tmp_path, "two", "import sys\nopen(sys.argv[2], 'w').write("
                                  "'{\"id\": \"a\", \"observations\": []}\\n{\"id\": \"b\", \"observations\": []}\\n')\n")
    (run,) = run_cases(two, CASES[:1], tmp_path / "two", cwd=tmp_path).runs
    assert (run.status, run.reason) == ("error", "wrote 2 traces; one run must write one")

    missing = AgentCommand(command=[str(tmp_path / "no-such-agent"), "{case}", "{out}"])
    (run,) = run_cases(missing, CASES[:1], tmp_path / "missing", cwd=tmp_path).runs
    assert run.status == "error" and run.reason.startswith("could not start")


def test_a_json_document_trace_is_read_too(tmp_path):
    pretty = _agent(tmp_path, "pretty", "import json, sys\n"
                                        "json.dump({'id': 'x', 'observations': []}, open(sys.argv[2], 'w'), indent=2)\n")
    (run,) = run_cases(pretty, CASES[:1], tmp_path / "out", cwd=tmp_path).runs
    assert run.status == "ok", run.reason


def test_only_allowed_variables_reach_the_agent(tmp_path):
    agent = _agent(tmp_path, "env", GOOD_AGENT, env=["SUPPORT_API_URL"])
    parent_env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-secret",
                  "SUPPORT_API_URL": "http://localhost:9", "AWS_SECRET_ACCESS_KEY": "x"}
    out = run_cases(agent, CASES[:1], tmp_path / "out", cwd=tmp_path, env=parent_env)
    seen = set(out.traces[0].metadata["env"])
    assert {"PATH", "HOME", "SUPPORT_API_URL"} <= seen
    assert "OPENAI_API_KEY" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen
    assert scrubbed_env(["X"], {"X": "1", "Y": "2", "PATH": "/bin"}) == {"PATH": "/bin", "X": "1"}


def test_agent_command_must_name_case_and_out():
    with pytest.raises(ValidationError, match=r"must name \{out\}"):
        AgentCommand(command=["agent", "--case", "{case}"])
    with pytest.raises(ValidationError, match=r"unknown placeholder \{trace\}"):
        AgentCommand(command=["agent", "{case}", "{out}", "{trace}"])
    with pytest.raises(ValidationError, match="env"):
        AgentCommand(command=["agent", "{case}", "{out}"], env=["NOT-A-NAME"])


def _sample_subject(tmp_path, spec):
    from evalkit.sample_subject.specs import build_dataset
    from evalkit.suite import write_dataset

    dataset = build_dataset(7)
    picked = [c for c in dataset.cases if c.tuple["intent"] in ("refund_request", "billing_dispute")
              and c.tuple["customer_tier"] == "premium"][:3]
    write_dataset(tmp_path / "dataset.json", dataset.model_copy(update={"cases": picked}))
    (tmp_path / "agent-spec.yaml").write_text(yaml.safe_dump(spec))
    subject = {"name": "support-agent", "traces": "traces.jsonl", "dataset": "dataset.json",
               "notebooks": ["00_overview"],
               "agent": {"command": ["{python}", "-m", "evalkit.sample_subject.agent_command", "--spec", "agent-spec.yaml",
                                     "--case", "{case}", "--repeat", "{repeat}", "--out", "{out}"],
                         "timeout_s": 60}}
    Subject.model_validate(subject)
    (tmp_path / "subject.yaml").write_text(yaml.safe_dump(subject))
    return tmp_path / "subject.yaml", picked


@pytest.mark.slow
def test_the_sample_agent_runs_deterministically_and_resumes(tmp_path):
    from evalkit.sample_subject.agent_spec import default_spec

    subject, picked = _sample_subject(tmp_path, default_spec(7).to_json_obj())
    a = run_subject(subject, tmp_path / "a", repeats=2)
    assert a.counts() == {"ok": 6, "error": 0, "timeout": 0}, [r.reason for r in a.runs]
    assert [t.metadata["caseId"] for t in a.traces] == [c.id for c in picked for _ in (1, 2)]
    assert [t.input for t in a.traces][::2] == [c.query for c in picked]
    b = run_subject(subject, tmp_path / "b", repeats=2)
    assert a.runs_file.read_bytes() == b.runs_file.read_bytes()
    assert a.traces_file.read_bytes() == b.traces_file.read_bytes()
    (tmp_path / "b" / "runs.jsonl").unlink()
    resumed = run_subject(subject, tmp_path / "b", repeats=2)
    assert resumed.reused == 6
    assert resumed.runs_file.read_bytes() == a.runs_file.read_bytes()
    assert resumed.traces_file.read_bytes() == a.traces_file.read_bytes()
    spec = yaml.safe_load((tmp_path / "agent-spec.yaml").read_text())
    (tmp_path / "agent-spec.yaml").write_text(yaml.safe_dump({**spec, "seed": 8}))
    changed = run_subject(subject, tmp_path / "b", repeats=1)
    assert changed.reused == 0  # a changed agent spec is run again, never served from the old runs
    assert changed.traces[0].id == a.traces[0].id
    assert changed.traces[0].to_json_obj() != a.traces[0].to_json_obj()


@pytest.mark.slow
def test_the_agent_spec_decides_which_failure_modes_show(tmp_path):
    modes = ["dropped_tool_result", "hallucinated_policy", "missed_escalation", "wrong_tool_args"]
    always = {"seed": 1, "failure_rates": dict.fromkeys(modes, 1.0), "order_lookup_timeout_rate": 0.0,
              "kb_search_error_rate": 0.0}
    never = {**always, "failure_rates": dict.fromkeys(modes, 0.0)}
    (tmp_path / "always").mkdir()
    (tmp_path / "never").mkdir()
    subject, _ = _sample_subject(tmp_path / "always", always)
    shown = {m for t in run_subject(subject, tmp_path / "always" / "out").traces
             for m in t.metadata["injected_failures"]}
    assert shown == set(modes)
    subject, _ = _sample_subject(tmp_path / "never", never)
    out = run_subject(subject, tmp_path / "never" / "out")
    assert out.counts()["ok"] == 3 and all(t.metadata["injected_failures"] == [] for t in out.traces)


def test_run_subject_needs_an_agent(tmp_path):
    from evalkit.io import InputError

    (tmp_path / "subject.yaml").write_text("name: s\ntraces: t.jsonl\nnotebooks: [00_overview]\n")
    with pytest.raises(InputError, match="agent: the subject names no agent command"):
        run_subject(tmp_path / "subject.yaml", tmp_path / "out")


def test_a_run_record_says_which_trace_or_why_not():
    from evalkit.contracts.dataset import AgentRun

    with pytest.raises(ValidationError, match="traceId: a run with status ok names the trace"):
        AgentRun(case_id="case-1", repeat=1, status="ok")
    with pytest.raises(ValidationError, match="reason: a run with status timeout says why"):
        AgentRun(case_id="case-1", repeat=1, status="timeout")
    with pytest.raises(ValidationError, match="repeat"):
        AgentRun(case_id="case-1", repeat=0, status="error", reason="x")
