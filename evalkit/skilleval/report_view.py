"""A skill-eval report as HTML: a ``<section>`` for the run report, or a page of its own.

The section states the outcome and why it follows from the evidence (the contract's own precedence:
fail > pass > incomplete, waived only over incomplete), counts the comparisons, lists every case with
both arms and the human review, the deterministic checks, and the waiver in full when there is one.
Every string from the report goes through Jinja's autoescaping.

Importing this module registers the section with the run report (:func:`evalkit.report.register_section`):
a release report at ``RUN/skilleval/report.json`` (``evalkit skill-eval resume --out``) is shown in
``RUN/index.html``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from markupsafe import Markup

from evalkit.contract_files import read_model
from evalkit.contracts.skilleval import COMPARISONS, SkillEvalReport, base_outcome
from evalkit.io import atomic_write_text
from evalkit.report import ReportSection, page_environment, register_section, render_page
from evalkit.skilleval.resume import exit_code

RUN_REPORT_FILE = "skilleval/report.json"
"""Where a skill-eval release report sits in a run folder to be shown as a section of the run's report."""


def outcome_reason(report: SkillEvalReport) -> str:
    """Why the report has its outcome, in one sentence."""
    base, why = base_outcome(report.deterministic_checks, report.cases, report.uncovered_skills)
    why = re.sub(r"cases\[(\d+)\]", lambda m: f"case {report.cases[int(m.group(1))].case_id}", why)
    if report.outcome == "waived":
        return f"Waived by {report.waiver.approver}: the evidence alone gives 'incomplete' ({why})." \
            if report.waiver is not None else "Waived."
    if base == "pass":
        return "Pass: every candidate arm passed, every required baseline ran, no case is worse."
    return f"{base.capitalize()}: {why}."


def report_section(report: SkillEvalReport) -> Markup:
    """The report as one HTML ``<section id="skill-eval">`` with its own scoped styles.

    Args:
        report: a validated skill-eval report (``evalkit skill-eval resume --out``).

    Returns:
        Markup safe to place in a page whose CSP allows inline styles (the run report's does).
    """
    counts = Counter(case.comparison for case in report.cases)
    passed = sum(1 for c in report.cases if c.candidate is not None and c.candidate.outcome == "pass")
    html = page_environment("evalkit.skilleval").get_template("report_section.html.j2").render(
        report=report, why=outcome_reason(report), candidates_passed=passed,
        comparisons=[(name, counts[name]) for name in COMPARISONS if counts[name]])
    return Markup(html)


def render_report_page(report: SkillEvalReport) -> str:
    """A self-contained page holding only the report's section (no script at all)."""
    return render_page("evalkit.skilleval", "report_page.html.j2", styles=["report_page.css.j2", "report_section.css.j2"],
                       title=report.session_id, section=report_section(report))


def section_style() -> str:
    """The section's style sheet, which a page showing the section carries."""
    return page_environment("evalkit.skilleval").get_template("report_section.css.j2").render()


def write_report_page(report: SkillEvalReport, out: str | Path) -> Path:
    """Write :func:`render_report_page` atomically; returns the path."""
    path = Path(out)
    atomic_write_text(path, render_report_page(report))
    return path


def report_section_of_file(path: Path) -> Markup:
    """:func:`report_section` of the report file at ``path`` (read strictly against its contract)."""
    return report_section(read_model(path, SkillEvalReport))


def write_report_page_of_file(report_file: str | Path, out: str | Path) -> tuple[Path, str, int]:
    """Read a report file and write its page (:func:`write_report_page`).

    Returns:
        The page, the outcome's reason and the exit status the outcome calls for (as ``resume``'s).

    Raises:
        InputError: the report file is missing or breaks its contract (named).
    """
    report = read_model(report_file, SkillEvalReport)
    return write_report_page(report, out), outcome_reason(report), exit_code(report)


register_section(ReportSection("skill-eval", "Skill evaluation", RUN_REPORT_FILE, report_section_of_file,
                               style=section_style()))
