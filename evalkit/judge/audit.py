"""Auditing a judge for bias: position (swap the two answers), verbosity (length), and self-preference.

Position. A pairwise judge is asked twice, once with the answers in each order. A judge without
position bias names the same answer both times; the audit reports how often it does not (the flip
rate), the share of judgments won by whichever answer was shown first (0.5 without bias, with an
exact sign test), and, where there is a human label, agreement per order and in both orders.

Verbosity. Does the verdict follow the answer's length? For pass/fail verdicts
(:func:`verbosity_audit`): the point-biserial correlation of length with passing and the
probability that a passing answer is longer than a failing one (Mann-Whitney's U / n1 n0), with a
seeded two-sided permutation test on the correlation (scipy is not a dependency, and a permutation
test needs no distributional assumption). For pairwise judges (:func:`pairwise_verbosity`): how
often the judge picks the longer answer against how often the human label does, on the same pairs,
with McNemar's exact test (a judge that likes length no more than people do is not biased by it).

Self-preference. A judge from the same model family as the agent it grades tends to favour it
(Panickssery et al. 2024, "LLM evaluators recognize and favor their own generations"):
:func:`same_family_warning` says so from the model ids, using :data:`MODEL_FAMILIES`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalkit.compare import PairedTable, mcnemar_exact, sign_test
from evalkit.io import InputError, read_json_strict

DEFAULT_PERMUTATIONS = 10_000
"""Permutations of the verbosity test: p-values resolved to about 1e-4."""

PERMUTATION_CELLS = 2_000_000
"""Permuted labels held in memory at once (16 MB of floats)."""

MODEL_FAMILIES: tuple[tuple[str, str], ...] = (
    ("openai", r"(?:^|[/:.])(?:gpt-|chatgpt|o[134](?:-|$)|text-davinci|davinci)"),
    ("anthropic", r"claude"),
    ("google", r"gemini|gemma|palm|bison"),
    ("meta", r"llama"),
    ("mistral", r"mistral|mixtral|codestral|ministral|pixtral"),
    ("qwen", r"qwen|qwq"),
    ("deepseek", r"deepseek"),
    ("xai", r"grok"),
    ("cohere", r"command-r|cohere"),
    ("microsoft", r"(?:^|[/:.])phi-"),
)
"""Model families by a pattern on the lowercased model id (first match wins). GPT and the o-series
(o1, o3, o4) are one family: same vendor, same training lineage. Provider prefixes such as
``openai/`` or ``bedrock:anthropic.`` are allowed before the name. Extend by passing ``families``."""


def model_family(model_id: str, families: Sequence[tuple[str, str]] = MODEL_FAMILIES) -> str | None:
    """The family of a model id, or None when no pattern matches."""
    low = model_id.lower()
    return next((name for name, pattern in families if re.search(pattern, low)), None)


def same_family_warning(judge_model: str, agent_model: str,
                        families: Sequence[tuple[str, str]] = MODEL_FAMILIES) -> str | None:
    """A warning when the judge and the agent under test come from the same model family, else None."""
    fam = model_family(judge_model, families)
    if fam is None or fam != model_family(agent_model, families):
        return None
    return (f"the judge {judge_model!r} and the agent {agent_model!r} are both {fam} models: a judge tends "
            "to favour answers from its own family; validate it against human labels on this agent's "
            "traces, or judge with a model from another family")


@dataclass(frozen=True)
class PairwiseJudgment:
    """A pairwise judge's verdict on one pair, in both presentation orders, mapped to the original order.

    ``winner`` is the answer (1 or 2) the judge preferred with ``output_1`` shown first;
    ``winner_swapped`` with ``output_2`` shown first, already mapped back (1 means ``output_1``).
    None is an undecided verdict. ``label`` is the human preference, None when there is none.
    """

    pair_id: str
    instruction: str
    output_1: str
    output_2: str
    label: int | None
    winner: int | None
    winner_swapped: int | None


@dataclass(frozen=True)
class SwapAudit:
    """Position-bias figures over pairs judged in both orders."""

    pairs: int
    undecided: int
    """Pairs left out because a verdict in either order was undecided."""
    consistent: int
    first_wins: int
    """Judgments (both orders counted) won by the answer shown first."""
    first_wins_both_orders: int
    """Inconsistent pairs where the first-shown answer won both times."""
    second_wins_both_orders: int
    labelled: int
    right_in_order: int
    right_swapped: int
    right_both: int
    first_wins_p: float
    """Exact two-sided sign test of ``first_wins`` out of ``2 * pairs`` against 1/2."""

    @property
    def inconsistent(self) -> int:
        return self.pairs - self.consistent

    @property
    def flip_rate(self) -> float | None:
        return self.inconsistent / self.pairs if self.pairs else None

    @property
    def first_win_share(self) -> float | None:
        return self.first_wins / (2 * self.pairs) if self.pairs else None


def swap_audit(judgments: Sequence[PairwiseJudgment]) -> SwapAudit:
    """Position consistency, the first-shown answer's share of wins, and agreement with labels by order."""
    decided = [j for j in judgments if j.winner is not None and j.winner_swapped is not None]
    consistent = sum(j.winner == j.winner_swapped for j in decided)
    # In the swapped order output_2 is shown first, so a mapped-back winner of 2 is a first-position win.
    first = sum((j.winner == 1) + (j.winner_swapped == 2) for j in decided)
    labelled = [j for j in decided if j.label is not None]
    return SwapAudit(
        pairs=len(decided), undecided=len(judgments) - len(decided), consistent=consistent, first_wins=first,
        first_wins_both_orders=sum(j.winner == 1 and j.winner_swapped == 2 for j in decided),
        second_wins_both_orders=sum(j.winner == 2 and j.winner_swapped == 1 for j in decided),
        labelled=len(labelled), right_in_order=sum(j.winner == j.label for j in labelled),
        right_swapped=sum(j.winner_swapped == j.label for j in labelled),
        right_both=sum(j.winner == j.label == j.winner_swapped for j in labelled),
        first_wins_p=sign_test(first, 2 * len(decided)))


@dataclass(frozen=True)
class VerbosityAudit:
    """Association of answer length with a pass verdict."""

    n: int
    passes: int
    point_biserial: float | None
    longer_passes: float | None
    """P(a passing answer is longer than a failing one), ties half: Mann-Whitney U / (n1 n0)."""
    p_value: float | None
    permutations: int
    seed: int


def _point_biserial(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation of ``x`` with each row of the 0/1 matrix ``y`` (point-biserial)."""
    xc = x - x.mean()
    yc = y - y.mean(axis=-1, keepdims=True)
    return (yc @ xc) / (np.sqrt((yc ** 2).sum(axis=-1)) * np.sqrt((xc ** 2).sum()))


def verbosity_audit(lengths: Sequence[float], passed: Sequence[bool], *,
                    permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0) -> VerbosityAudit:
    """Test whether pass verdicts go with longer (or shorter) answers.

    Args:
        lengths: each answer's length (characters, tokens: any consistent measure).
        passed: whether the judge passed that answer, in the same order.
        permutations: permutations of the labels for the p-value.
        seed: seed of the permutations.

    Returns:
        The correlation, the Mann-Whitney probability and the two-sided permutation p-value
        (``(1 + #{|r*| >= |r|}) / (1 + permutations)``); None where one class is missing or every
        length is equal.
    """
    if len(lengths) != len(passed):
        raise InputError(f"lengths and passed differ in length ({len(lengths)} vs {len(passed)})", path="passed")
    x = np.asarray(lengths, dtype=float)
    y = np.asarray(passed, dtype=bool)
    n, k = len(x), int(y.sum())
    if not 0 < k < n or np.all(x == x[0]):
        return VerbosityAudit(n, k, None, None, None, permutations, seed)
    r = float(_point_biserial(x, y.astype(float)))
    ranks = _ranks(x)
    u = ranks[y].sum() - k * (k + 1) / 2
    rng = np.random.default_rng(seed)
    extreme, done = 0, 0
    chunk = max(1, PERMUTATION_CELLS // n)  # bounded memory whatever the number of answers
    while done < permutations:
        m = min(chunk, permutations - done)
        null = _point_biserial(x, rng.permuted(np.tile(y.astype(float), (m, 1)), axis=1))
        extreme += int(np.count_nonzero(np.abs(null) >= abs(r) - 1e-12))  # ties count as extreme
        done += m
    p = (1 + extreme) / (1 + permutations)
    return VerbosityAudit(n, k, r, float(u / (k * (n - k))), p, permutations, seed)


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties given their average rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    return ranks


@dataclass(frozen=True)
class PairwiseVerbosity:
    """How often the judge and the human label pick the longer answer, on labelled pairs of unequal length."""

    pairs: int
    judge_longer: int
    human_longer: int
    p_value: float
    """McNemar's exact two-sided test of judge vs human picking the longer answer."""

    @property
    def judge_longer_share(self) -> float | None:
        return self.judge_longer / self.pairs if self.pairs else None

    @property
    def human_longer_share(self) -> float | None:
        return self.human_longer / self.pairs if self.pairs else None


def pairwise_verbosity(judgments: Sequence[PairwiseJudgment], *, swapped: bool = False) -> PairwiseVerbosity:
    """Does the judge prefer the longer answer more often than people do? (one order at a time).

    Args:
        judgments: pairwise judgments with labels; pairs of equal length, without a label or
            undecided in the chosen order are left out.
        swapped: audit the swapped order's verdicts instead of the original order's.
    """
    cells = {"pp": 0, "pf": 0, "fp": 0, "ff": 0}
    for j in judgments:
        winner = j.winner_swapped if swapped else j.winner
        if winner is None or j.label is None or len(j.output_1) == len(j.output_2):
            continue
        longer = 1 if len(j.output_1) > len(j.output_2) else 2
        cells[("p" if j.label == longer else "f") + ("p" if winner == longer else "f")] += 1
    # Rows: the human picked the longer answer; columns: the judge did (McNemar's old = human, new = judge).
    table = PairedTable(cells["pp"], cells["pf"], cells["fp"], cells["ff"])
    return PairwiseVerbosity(pairs=table.n, judge_longer=cells["pp"] + cells["fp"],
                             human_longer=cells["pp"] + cells["pf"], p_value=mcnemar_exact(table).p_two_sided)


LLMBAR_ORDERS = ("swap = False", "swap = True")
"""LLMBar's keys for the two presentation orders in ``results[0]``."""


def _llmbar_winner(value: object, file: str, at: str) -> int | None:
    if value in ("1", "2", 1, 2) and not isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, str):
        return None  # an unparsed or tied reply: undecided, counted by the audit
    raise InputError(f"expected '1', '2' or null (got {value!r})", file=file, path=at)


def read_llmbar_pairwise(path: str | Path) -> list[PairwiseJudgment]:
    """Pairwise judgments from an LLMBar evaluator ``result.json`` (princeton-nlp/LLMBar).

    The mapping, record ``i`` (counted from 1) of the JSON list:

    ===========================================  ======================================
    LLMBar                                       PairwiseJudgment
    ===========================================  ======================================
    (no id in the file)                          ``pair_id`` = ``"i"``
    ``input``                                    ``instruction``
    ``output_1`` / ``output_2``                  ``output_1`` / ``output_2``
    ``label`` (int 1 or 2)                       ``label``
    ``results[0]["swap = False"].winner``        ``winner`` (``"1"``/``"2"`` -> 1/2)
    ``results[0]["swap = True"].winner``         ``winner_swapped``: LLMBar already maps it
                                                 back to the original order ("Output (b)"
                                                 in the swapped prompt is ``output_1``)
    ===========================================  ======================================

    A winner that is null or another string is undecided (None). ``completion`` (the judge's raw
    text) is not kept: it carries no rationale, only "Output (a)"/"Output (b)".

    Raises:
        InputError: not a list of such records, naming the record and the field.
    """
    file = str(path)
    data = read_json_strict(path)
    if not isinstance(data, list):
        raise InputError(f"expected a JSON list of pairwise records (got {type(data).__name__})", file=file)
    out = []
    for i, rec in enumerate(data):
        at = f"[{i}]"
        if not isinstance(rec, dict):
            raise InputError("expected an object", file=file, path=at)
        for key in ("input", "output_1", "output_2"):
            if not isinstance(rec.get(key), str):
                raise InputError(f"missing or not a string (got {rec.get(key)!r:.40})", file=file, path=f"{at}.{key}")
        label = rec.get("label")
        if label not in (1, 2, None) or isinstance(label, bool):
            raise InputError(f"expected 1, 2 or null (got {label!r})", file=file, path=f"{at}.label")
        results = rec.get("results")
        if not isinstance(results, list) or len(results) != 1 or not isinstance(results[0], dict):
            raise InputError("expected a list holding one object with both orders", file=file, path=f"{at}.results")
        winners = []
        for order in LLMBAR_ORDERS:
            run = results[0].get(order)
            if not isinstance(run, dict) or "winner" not in run:
                raise InputError(f"missing the verdict in order {order!r}", file=file,
                                 path=f"{at}.results[0].{order}")
            winners.append(_llmbar_winner(run["winner"], file, f"{at}.results[0].{order}.winner"))
        out.append(PairwiseJudgment(pair_id=str(i + 1), instruction=rec["input"], output_1=rec["output_1"],
                                    output_2=rec["output_2"], label=label, winner=winners[0],
                                    winner_swapped=winners[1]))
    return out
