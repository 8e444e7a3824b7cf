"""Eval results built by hand, and a fake subject whose "agent" is a JSON file the remedy amends."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.contracts.verdict import Ref
from evalkit.edd import CriterionRate, EvalResult, FailingOutcome


def result(rates: dict[str, tuple[int, int]], *, repeats: int = 1, unstable: int = 0, verdict: str | None = None,
           refs: bool = True, skipped: dict[str, int] | None = None, undecided: dict[str, int] | None = None,
           severity: dict[str, str] | None = None) -> EvalResult:
    """An EvalResult with ``{criterion: (passed, failed)}``; failing outcomes for each fail, flips as asked;
    ``skipped``/``undecided`` outcomes per criterion; every criterion HIGH unless ``severity`` says."""
    failing = [FailingOutcome(case_id=f"case-{cid}-{i}", trace_id=f"case-{cid}-{i}-r1", criterion_id=cid,
                              critique=f"{cid} failed on case {i}",
                              refs=[Ref(obs="respond", path="output.answer", value=f"answer {i}")] if refs else [])
               for cid, (_, failed) in rates.items() for i in range(failed)]
    flips = [[f.case_id, f.criterion_id] for f in failing[:unstable]]
    any_fail = any(f for _, f in rates.values())
    return EvalResult(
        repeats=repeats, verdict=verdict or ("fail" if any_fail else "pass"),
        criteria=[CriterionRate(criterion_id=cid, severity=(severity or {}).get(cid, "HIGH"), statement=f"{cid} holds",
                                evidence=f"criterion {cid}. Injected failure mode mode_{cid}", passed=p, failed=f,
                                skipped=(skipped or {}).get(cid, 0), undecided=(undecided or {}).get(cid, 0))
                  for cid, (p, f) in rates.items()],
        failing=failing, stability_measured=repeats >= 2, stable=repeats >= 2 and unstable == 0, unstable=flips)


class FileAgent:
    """evaluate(swing, phase) over an "agent" that is a JSON file: ``{"failing": N, "flipping": M}``.

    Out of 20 cases N fail; while M > 0 a variance swing sees M of them flip. A remedy lowers the numbers.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.calls: list[tuple[int, str]] = []

    def __call__(self, swing: int, phase: str) -> EvalResult:
        self.calls.append((swing, phase))
        state = json.loads(self.path.read_text())
        repeats = 5 if phase == "variance" else 1
        n = state["failing"]
        return result({"answer-correct": (20 - n, n)}, repeats=repeats,
                      unstable=min(n, state["flipping"]) if repeats > 1 else 0)


REMEDY = '''
import json, os, signal, sys
request, response, agent = sys.argv[1], sys.argv[2], sys.argv[3]
mode = sys.argv[4] if len(sys.argv) > 4 else "fix"
req = json.load(open(request))
if mode == "crash":
    sys.exit("remedy: exploded")
if mode == "hang":
    import time; time.sleep(60)
if mode == "garbage":
    open(response, "w").write("{not json")
    sys.exit(0)
if mode == "silent":
    sys.exit(0)
if mode == "other-id":
    json.dump({"requestId": "someone-else", "status": "amended", "note": "x"}, open(response, "w"))
    sys.exit(0)
if mode == "reject":
    json.dump({"requestId": req["requestId"], "status": "rejected", "note": "not reproducible"}, open(response, "w"))
    sys.exit(0)
state = json.load(open(agent))
if mode == "fix":
    if state["flipping"]:
        state["flipping"] = 0
    else:
        state["failing"] = max(0, state["failing"] - 4)
json.dump(state, open(agent, "w"))
count = agent + ".calls"
open(count, "a").write(f"{req['swing']}\\n")
json.dump({"requestId": req["requestId"], "status": "amended", "amendedTarget": "agentspec",
           "note": f"{mode}: {state}"}, open(response, "w"))
if os.environ.get("KILL_LOOP_AFTER_RESPONSE") == str(req["swing"]):
    os.kill(os.getppid(), signal.SIGKILL)
'''


def write_agent(folder: Path, failing: int, flipping: int) -> Path:
    """The fake agent's state file and the remedy script beside it; returns the state file."""
    agent = folder / "agent.json"
    agent.write_text(json.dumps({"failing": failing, "flipping": flipping}))
    (folder / "remedy.py").write_text(REMEDY)
    return agent
