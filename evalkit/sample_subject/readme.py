"""The human-facing files of the sample: ``subject.yaml`` and ``README.md`` (tables from the ground truth)."""

from __future__ import annotations

from typing import Any

import yaml

from evalkit.sample_subject.catalog import (
    ANNOTATION_BASE_TIME,
    DISPUTE_ESCALATION_THRESHOLD,
    JUDGE_ITERATIONS,
    JUDGE_MODEL,
    LABEL_FAIL_SHARE,
    MODEL,
    REFUND_LIMIT,
    REVIEW_MISS_RATE,
    REVIEWED_TRACES,
    REVIEWERS,
    SUBJECT,
)
from evalkit.sample_subject.judging import judge_run_file

# The pipeline notebooks (notebooks/<name>.ipynb) the sample runs; each analysis adds its own here.
NOTEBOOKS = ["00_overview", "01_error_analysis", "02_judge_calibration", "03_flow_graph", "04_scorecard"]
EVAL_RUN = "../../reports/sample-eval"
"""Where `make demo` writes the sample's eval run (`evalkit eval run`), relative to data/sample; notebook
04_scorecard scores the subject's own traces (and says so) where it is not there."""

FILES = (
    ("subject.yaml", "`Subject` (evalkit.contracts.subject)", "Index of this subject: file paths (relative), pinned judge, seed, notebooks."),
    ("traces.jsonl", "`Trace` (evalkit.contracts.trace)",
     "One native trace per line, sorted by id; `metadata.injected_failures` is the per-trace ground truth."),
    ("human-labels.jsonl", "`HumanLabel` (evalkit.contracts.labels)",
     "Labels for `grounded-policy` and `escalation-correct`, sorted by (criterionId, traceId)."),
    ("criterion-verdicts.jsonl", "`CriterionVerdict` (evalkit.contracts.verdict)",
     "Simulated judge verdicts for every trace and both criteria, sorted by (criterionId, traceId)."),
    ("criterion-verdicts.prompt-v1.jsonl, criterion-verdicts.prompt-v2.jsonl",
     "`CriterionVerdict` (evalkit.contracts.verdict)",
     "The judge under two earlier, weaker prompt iterations, on the dev split only (subject `judge_runs`)."),
    ("eval-matrix.yaml", "`EvalMatrix` (evalkit.contracts.matrix)",
     "Components and one criterion per failure mode, each with its criterionId; the deterministic ones carry "
     "their code check (docs/checks.md)."),
    ("dataset.json", "`Dataset` (evalkit.contracts.dataset)",
     "Dimensions intent x customer_tier x channel and one case per tuple (20)."),
    ("writer-cassette.jsonl", "replay cassette (evalkit.judge.providers.replay)",
     "A simulated case writer's replies (`sim-writer-2026-01`), three cases for each of the 20 tuples: "
     "`evalkit dataset generate subject.yaml --missing --provider replay --cassette writer-cassette.jsonl` "
     "fills every tuple a copy of the suite lacks."),
    ("agent-spec.yaml", "`AgentSpec` (evalkit.sample_subject.agent_spec)",
     "Settings of the runnable agent (subject `agent`): failure and tool-error rates, seed."),
    ("expected-flow.json", "`ExpectedFlow` (evalkit.contracts.flow)",
     "Dispatch tool and the producer -> consumer threadings a correct trace shows."),
    ("behavior-tree.json", "`BehaviorTree` (evalkit.contracts.behavior_tree)",
     "Decision points: intent routing, refund approval, billing dispatch, escalation gate; where code sees "
     "a decision (observe, observedWhen, takenWhen)."),
    ("annotations.jsonl", "`Annotation` (evalkit.contracts.annotation)",
     "Error-analysis store, append-only, in review order: two reviewers' pass/fail, notes and failure modes."),
    ("failure-modes.yaml", "`Taxonomy` (evalkit.contracts.annotation)",
     "The four failure modes with definitions and examples, and rules mapping review notes onto them."),
    ("draft-cassette.jsonl", "judge cassette (evalkit.judge.providers.replay)",
     "A simulated drafter's reply to `evalkit analysis draft-modes` on these notes (model "
     "`sim-drafter-2026-01`: it groups the notes by their wording; no model wrote it), for drafting offline."),
    ("draft-modes.yaml", "`DraftTaxonomy` (evalkit.contracts.modes)",
     "What `evalkit analysis draft-modes --provider replay` drafts from that cassette: a proposal, not ratified "
     "(notebook 01 shows it)."),
    ("ground-truth.json", "plain JSON", "Realised rates and counts; the tables below are rendered from it."),
)


def subject_yaml(seed: int) -> str:
    """``subject.yaml``: where the subject's files are, relative to it, and how it is judged."""
    doc = {
        "name": SUBJECT,
        "traces": "traces.jsonl",
        "labels": "human-labels.jsonl",
        "verdicts": "criterion-verdicts.jsonl",
        "eval_matrix": "eval-matrix.yaml",
        "dataset": "dataset.json",
        "expected_flow": "expected-flow.json",
        "behavior_tree": "behavior-tree.json",
        "annotations": "annotations.jsonl",
        "taxonomy": "failure-modes.yaml",
        "judge_runs": [judge_run_file(name) for name, _ in JUDGE_ITERATIONS],
        "judge": {"provider": "simulated", "model": JUDGE_MODEL, "temperature": 0},
        "agent": {"command": ["{python}", "-m", "evalkit.sample_subject.agent_command", "--spec", "agent-spec.yaml",
                              "--case", "{case}", "--repeat", "{repeat}", "--out", "{out}"],
                  "timeout_s": 30, "env": []},
        "seed": seed,
        "notebooks": NOTEBOOKS,
        "parameters": {"01_error_analysis": {"draft_file": "draft-modes.yaml"},
                       "04_scorecard": {"eval_run_path": EVAL_RUN}},
    }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _num(x: Any) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4f}" if isinstance(x, float) else str(x)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_num(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def readme_text(truth: dict[str, Any], trace_count: int, seed: int) -> str:
    """``README.md`` of the sample; every number in its tables comes from ``truth``."""
    modes = truth["failureModes"]
    criteria = truth["criteria"]
    mode_rows = [[f"`{m}`", d["targetRate"], d["applicableTraces"], d["injectedTraces"], d["realisedRate"],
                  d["realisedRateAllTraces"], d["appliesTo"]] for m, d in modes.items()]
    crit_rows = [[f"`{c}`", f"`{d['failureMode']}`", d["trueFailCount"], d["truePassRate"]["allTraces"],
                  d["unlabelledTraces"], d["truePassRate"]["unlabelledTraces"]] for c, d in criteria.items()]
    judge_rows = [[f"`{c}`", d["judge"]["tprTarget"], d["judge"]["tprRealised"], d["judge"]["tnrTarget"],
                   d["judge"]["tnrRealised"], d["judge"]["uncertain"], d["judge"]["observedPassRate"]]
                  for c, d in criteria.items()]
    label_rows = [[f"`{c}`", split, *counts.values(), sum(counts.values())]
                  for c, d in criteria.items() for split, counts in d["labels"]["bySplit"].items()]
    files = _table(["file", "contract", "contents"], [list(f) for f in FILES])
    mode_table = _table(["failure mode", "target rate", "applicable", "injected", "realised rate",
                         "share of all traces", "applies to"], mode_rows)
    crit_table = _table(["criterion", "fails when", "true fails", "true pass rate (all)", "unlabelled traces",
                         "true pass rate (unlabelled)"], crit_rows)
    judge_table = _table(["criterion", "TPR target", "TPR realised", "TNR target", "TNR realised", "uncertain",
                          "observed pass rate"], judge_rows)
    label_table = _table(["criterion", "split", "pass", "fail", "defer", "total"], label_rows)
    review = truth["annotations"]
    first, second = REVIEWERS
    reviewed = review["reviewers"][first]
    annotation_rows = [[f"`{m}`", d["injectedInReviewed"], d["annotated"], d["missed"], d["injectedRate"],
                        d["annotatedRate"]] for m, d in reviewed["failureModes"].items()]
    annotation_table = _table(["failure mode", "injected (reviewed)", "annotated", "missed", "injected rate",
                               "annotated rate"], annotation_rows)
    needs = truth["needsEscalation"]
    errors = ", ".join(f"{n} {name}" for name, n in truth["errorObservations"].items()) or "none"
    return f"""# Sample subject: `{SUBJECT}`

A simulated customer-support agent of a fictional shop, generated by `python -m evalkit.sample_subject`
(seed {seed}, {trace_count} traces). Every failure in it was injected on purpose at a stated rate and
recorded, so each analysis run on it (error analysis, judge calibration, flow graphs) can be checked
against the ground truth below. Nothing here is real customer data.

## Regenerate

```
.venv/bin/python -m evalkit.sample_subject              # writes data/sample/ (seed 7, 300 traces)
.venv/bin/python -m evalkit.sample_subject --out DIR --seed N --traces N
```

Output is byte-identical on every rerun (one seeded random stream per file, a fixed clock starting at
2026-03-02T09:00:00Z). `tests/sample/test_sample.py` fails when these files differ from a fresh
generation, so change the generator in `evalkit/sample_subject/`, never the files.

## The agent

Each trace (`name` "support-turn", `input` the customer message, `output` the final answer) holds:

- AGENT `support-agent`, the root; every other observation is its descendant (`parentId`).
- GENERATION `plan` (model `{MODEL}`): reads the system and user messages, outputs `content` and the
  `tool_calls` it will make.
- TOOL calls, in plan order: `kb_search` {{query}} -> {{articles}}, `order_lookup` {{order_id}} ->
  {{order_id, status, items, total, placed_at}}, `issue_refund` {{order_id, amount, reason}},
  `dispatch_billing_agent` {{task, context}} (a sub-agent dispatch with an AGENT `billing-agent` child and
  its GENERATION `billing-review`), `escalate_to_human` {{reason, priority}}.
- GENERATION `respond`: its input messages carry every tool result as a `tool`-role message whose
  `content` is the tool output itself, so the output threads into the answer; outputs {{answer}}.

Error observations (level ERROR with `statusMessage`): {errors}. Refunds above {REFUND_LIMIT:.2f} USD,
billing disputes above {DISPUTE_ESCALATION_THRESHOLD:.2f} USD and complaints from premium customers
need `escalate_to_human` ({needs} traces).

## Files

{files}
## Ground truth

Numbers below are counted from the generated files (`ground-truth.json` holds the same values).

### Injected failure modes

Each mode was drawn independently per trace, only where it applies; `metadata.injected_failures`
lists a trace's modes.

{mode_table}
How each one shows in a trace:

- `hallucinated_policy`: the answer's "Per our policy, ..." sentence states a different number or scope
  than the `kb_search` snippet (e.g. 90 days where KB-101 says 30).
- `dropped_tool_result`: the `order_lookup` or `kb_search` output (named in `metadata.dropped_tool`) is
  missing from the `respond` input messages, so its `items` / `articles` slot is unthreaded.
- `wrong_tool_args`: `order_lookup.input.order_id` differs from the order id in the customer message
  by one digit (and the lookup returns that other order).
- `missed_escalation`: an escalation trigger applies (`metadata.needs_escalation`) but there is no
  `escalate_to_human` call.

### Judged criteria

A criterion fails exactly when its failure mode was injected; every other trace passes. Unlabelled
traces are those with no label record for the criterion (a `defer` counts as labelled).

{crit_table}
### Simulated judge (`{JUDGE_MODEL}`, positive = pass)

TPR = P(judge pass | truly pass), TNR = P(judge fail | truly fail), realised over all traces with
`uncertain` verdicts left out. Each `uncertain` verdict carries `blockedBy` and confidence 0.

{judge_table}
### Human labels

About half the traces are labelled per criterion; the rest stay unlabelled. Failures are rare, so
each truly failing trace was labelled with probability {LABEL_FAIL_SHARE} and passing traces fill the
quota: TPR and TNR are conditional on the true class, so this enrichment does not bias them, but the
labelled pass rate is not the population's (use the unlabelled column above for that). Splits are
15/40/45 train/dev/test, stratified by label; `defer` labels carry no ground truth.

{label_table}
### Error analysis

`annotations.jsonl` is an append-only annotation store, in the order the reviews happened. Reviewer
`{first}` read {reviewed["reviewedTraces"]} traces drawn by `sample_traces(traces, {REVIEWED_TRACES}, "random", {seed})`
(from {ANNOTATION_BASE_TIME:%Y-%m-%d}), failing each with the modes injected into it (ids as in
`failure-modes.yaml`: `hallucinated_policy` -> `hallucinated-policy`) and a short note, and passing the
rest; every injected mode was overlooked with probability {REVIEW_MISS_RATE}, so annotated rates sit a
little under the injected ones. `firstFailingObs` names the step that made the first mistake (`plan`
for wrong arguments and missed escalations, `respond` otherwise). Reviewer `{second}` labelled
{review["sharedTraces"]} of the same traces with an independent miss stream: same
label on {review["sameLabel"]}, same modes on {review["sameModes"]}. Rates below are over `{first}`'s
{reviewed["reviewedTraces"]} reviewed traces ({reviewed["fail"]} fail, {reviewed["pass"]} pass).

{annotation_table}
Try it: `evalkit analysis rates data/sample/annotations.jsonl --taxonomy data/sample/failure-modes.yaml`,
or `evalkit review build data/sample/traces.jsonl --taxonomy data/sample/failure-modes.yaml
--hide-metadata injected_failures --hide-metadata dropped_tool --out review.html` to label traces yourself
(hiding the ground truth the traces carry).

Draft failure modes from the notes, offline (the simulated drafter's recorded reply):
`evalkit analysis draft-modes data/sample/annotations.jsonl --traces data/sample/traces.jsonl
--subject support-agent --provider replay --cassette data/sample/draft-cassette.jsonl --out draft.yaml`
(the bytes of `draft-modes.yaml`); ratify it with
`evalkit review build data/sample/traces.jsonl --draft draft.yaml --labels data/sample/annotations.jsonl
--out ratify.html`.
"""
