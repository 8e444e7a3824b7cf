"""The six credential-free gates a release needs, as rules over the commands and files of skills and cases.

Each rule takes what skill lint or registry validation already read (a command's argv with its file and
line, a file's relpath and bytes) and returns its problems as :class:`GateProblem`, whose message starts
with the gate's name, so every refusal names the file and the rule:

- **command**: every command of the tool or of Git is a documented subcommand with documented flags,
  as the policy's command table says (``operations.<op>.commands``: subcommand -> flags; ``""`` holds
  flags allowed before the subcommand). An operation without a table is not checked, and a run
  records the gate as not run (:func:`undocumented_operations`), so it is never evidence.
- **lifecycle**: the tool's subcommands come in the policy's canonical order (``lifecycle``; by default
  the init subcommand before any other use): ``tasknote add`` then ``tasknote init`` is refused.
- **machine-api**: where a subcommand documents the operation's ``json_flag``, every invocation passes
  it, so results are consumed as JSON, never scraped from text.
- **security**: no credentials, transcripts, raw evidence or installed skill content in fixtures; no
  eval definitions (or credentials) inside skills; no shell metacharacters in a case's argv.
- **cross-platform**: no platform-only program (the policy's ``platform_only``, else
  :data:`PLATFORM_ONLY`) and no absolute, drive or backslash path in a command.
- **parity**: the candidate skills byte-identical to their mirror copy (:mod:`evalkit.skilleval.mirror`).

Provider independence (no model vendor named in a skill) is a lint rule of its own, outside the six.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalkit.contracts.skilleval import WAIVER_REQUIRED_CHECKS, SkillEvalPolicy
from evalkit.errors import InputError

GATES: tuple[str, ...] = WAIVER_REQUIRED_CHECKS
"""The six credential-free gates, sorted: what a waived report's evidence must name."""

PLATFORM_ONLY: frozenset[str] = frozenset({
    "apt", "apt-get", "brew", "choco", "cmd", "cmd.exe", "defaults", "dnf", "explorer", "launchctl", "open",
    "osascript", "pacman", "pbcopy", "pbpaste", "powershell", "powershell.exe", "reg", "start", "systemctl",
    "winget", "xdg-open", "yum"})
"""Programs that exist on one platform only (macOS, Windows or one Linux family), refused unless the policy
gives its own ``platform_only`` list."""

SHELL_METACHARACTERS = re.compile(r"[;|&`$<>\n\r]")
"""Characters a shell would act on: a case's argv runs without a shell, so one of these is a sign the
author expected one (or an attempt to smuggle a second command)."""

_PROVIDERS = re.compile(
    r"\b(anthropic|openai|claude|chatgpt|gpt-?[0-9o][\w.-]*|gemini|mistral|cohere|bedrock|vertex ai|"
    r"azure openai|llama ?[0-9][\w.-]*)\b", re.IGNORECASE)
"""Model providers and models: a skill naming one instructs the agent to depend on it."""

_CREDENTIAL = re.compile(
    r"((?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{3,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]+|AIza[0-9A-Za-z_-]{30,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----|\b[A-Z0-9_]*(?:API_KEY|SECRET|TOKEN|PASSWORD)[A-Z0-9_]*\s*[=:]\s*\S)")
"""Secrets by their usual shapes: provider keys, cloud and chat tokens, private keys, ``*_API_KEY=...``."""

_PLACEHOLDER = re.compile(r"(?i)your|here|example|placeholder|\.\.\.|<|\$|\{|xxx|changeme|dummy|redacted|[=:]\s*(\"\"|'')")
"""What documentation writes where a secret would go (``your_api_key_here``, ``sk-...``, ``$TOKEN``): not a secret."""

_SECRET_FILES = re.compile(r"(^|/)(\.env(\..*)?|\.netrc|\.npmrc|\.pypirc|credentials(\.json)?|id_(rsa|dsa|ecdsa|ed25519)"
                           r"(\.pub)?|[^/]*\.(pem|key|p12|pfx))$", re.IGNORECASE)
_TRANSCRIPT_FILES = re.compile(r"(^|/)[^/]*(transcript|conversation|chat-?log)[^/]*$", re.IGNORECASE)
_RAW_EVIDENCE = re.compile(r"(^|/)(raw/|facts\.json$|stage\.json$|report\.json$)")
_INSTALLED_SKILL = re.compile(r"(^|/)(\.agents/|\.claude/|SKILL\.md$)")
_GIT_CONFIG_FILES = re.compile(r"(^|/)(\.gitconfig$|\.config/git/|\.gitmodules$)")
_EVAL_DEFINITIONS = re.compile(r"(^|/)(evals?/|[^/]*\.evals?\.(json|ya?ml)$|evals\.(json|ya?ml)$|case\.json$|"
                               r"seed\.json$|facts\.json$)")


class GateProblem(InputError):
    """A problem one gate found; the message starts with ``"<gate> gate: "``.

    What to do: fix the command or file named, or (for a command table, lifecycle or platform list)
    the policy, then check again.
    """

    def __init__(self, gate: str, message: str, *, file: str | None = None, line: int | None = None,
                 path: str | None = None) -> None:
        super().__init__(f"{gate} gate: {message}", file=file, line=line, path=path)
        self.gate = gate


@dataclass(frozen=True)
class Invocation:
    """One command a skill or a case runs, and where it is written."""

    argv: Sequence[str]
    file: str
    line: int | None = None
    member: str | None = None

    def problem(self, gate: str, message: str) -> GateProblem:
        return GateProblem(gate, message, file=self.file, line=self.line, path=self.member)


def _subcommand(argv: Sequence[str]) -> tuple[str | None, int]:
    """The first argument that is not a flag, and its index (None, len when there is none)."""
    for i, arg in enumerate(argv[1:], start=1):
        if not arg.startswith("-"):
            return arg, i
    return None, len(argv)


def _flag(arg: str) -> str:
    return arg.split("=", 1)[0]


def command_problems(invocation: Invocation, policy: SkillEvalPolicy) -> list[GateProblem]:
    """The command gate on one invocation of a program the policy allows (others are lint's business)."""
    argv = invocation.argv
    name = policy.operation_of_program(argv[0])
    if name is None:
        return []
    table = policy.operations[name].commands
    if table is None:
        return []  # nothing to check against: the run records the gate as not run (undocumented_operations)
    sub, at = _subcommand(argv)
    problems = []
    documented = sorted(s for s in table if s)
    if sub is None or sub not in table or not sub:
        problems.append(invocation.problem(
            "command", f"{sub!r} is not a documented subcommand of {argv[0]} (documented: {', '.join(documented)})"
            if sub is not None else f"{' '.join(argv)!r} names no subcommand of {argv[0]}"))
        return problems
    before, after = table.get("", []), table[sub]
    for i, arg in enumerate(argv[1:], start=1):
        if not arg.startswith("-") or arg == "-":
            continue
        allowed = before if i < at else after
        if arg not in allowed and _flag(arg) not in allowed:
            problems.append(invocation.problem(
                "command", f"{arg!r} is not a documented flag of '{argv[0]} {sub}' (documented: "
                           f"{', '.join(after) or 'none'})"))
    return problems


def machine_api_problems(invocation: Invocation, policy: SkillEvalPolicy) -> list[GateProblem]:
    """The machine-api gate: a subcommand that can answer in JSON is asked to."""
    name = policy.operation_of_program(invocation.argv[0])
    if name is None:
        return []
    operation = policy.operations[name]
    sub, _ = _subcommand(invocation.argv)
    flag = operation.json_flag
    if flag is None or operation.commands is None or sub is None or flag not in operation.commands.get(sub, []):
        return []
    if any(_flag(arg) == flag for arg in invocation.argv[1:]):
        return []
    return [invocation.problem("machine-api", f"'{invocation.argv[0]} {sub}' offers {flag}; pass it and read the "
                                              "JSON instead of scraping text")]


def lifecycle_order(policy: SkillEvalPolicy) -> list[str]:
    """The tool's subcommands in canonical order: the policy's ``lifecycle``, else its init subcommand alone."""
    if policy.lifecycle is not None:
        return list(policy.lifecycle)
    init = policy.init.argv_for(policy.storage_modes[0]) or []
    return [init[0]] if init else []


def lifecycle_problems(invocations: Iterable[Invocation], policy: SkillEvalPolicy) -> list[GateProblem]:
    """The lifecycle gate over one ordered sequence of invocations (one skill file, or one case).

    Each tool subcommand has a stage: its place in :func:`lifecycle_order`, or one past the end for any
    other use. A command whose stage comes before a stage already seen is out of order.
    """
    program = policy.operations[policy.init.operation].program
    order = lifecycle_order(policy)
    problems: list[GateProblem] = []
    latest: tuple[int, Invocation, str] | None = None
    for invocation in invocations:
        if invocation.argv[0] != program:
            continue
        sub, _ = _subcommand(invocation.argv)
        if sub is None:
            continue
        stage = order.index(sub) if sub in order else len(order)
        if latest is not None and stage < latest[0]:
            where = f" (line {latest[1].line})" if latest[1].line is not None and latest[1].file == invocation.file \
                else ""
            problems.append(invocation.problem(
                "lifecycle", f"'{program} {sub}' comes after '{program} {latest[2]}'{where}; the canonical order is "
                             f"{' -> '.join([*order, 'use'])}"))
        elif latest is None or stage > latest[0]:
            latest = (stage, invocation, sub)
    return problems


def cross_platform_problems(invocation: Invocation, policy: SkillEvalPolicy | None) -> list[GateProblem]:
    """The cross-platform gate: no platform-only program, no absolute, drive or backslash path."""
    given = policy.platform_only if policy is not None else None
    only = frozenset(given) if given is not None else PLATFORM_ONLY
    argv = invocation.argv
    problems = []
    if argv[0] in only:
        problems.append(invocation.problem("cross-platform", f"{argv[0]!r} exists on one platform only"))
    for arg in argv[1:]:
        value = arg.partition("=")[2] if arg.startswith("-") else arg
        if re.match(r"^([A-Za-z]:[\\/]|\\\\|/(?!/)\S)", value) or re.fullmatch(r"[\w.~-]+(\\[\w .~-]+)+\\?", value):
            problems.append(invocation.problem("cross-platform", f"{arg!r} is a platform-specific path; name paths "
                                                                 "relative to the repository with '/'"))
    return problems


def argv_security_problems(invocation: Invocation) -> list[GateProblem]:
    """The security gate on a case's argv: no shell metacharacters (commands run without a shell)."""
    return [invocation.problem("security", f"argument {i} {arg!r} holds a shell metacharacter; commands run as "
                                           "argv without a shell, so write one command per step")
            for i, arg in enumerate(invocation.argv[1:], start=1) if SHELL_METACHARACTERS.search(arg)]


_GIT_CONFIG_OPTIONS = ("-c", "--config-env", "--exec-path", "--git-dir", "--work-tree", "--namespace")
_RISKY_GIT_KEYS = re.compile(r"^(alias\.|core\.|filter\.|include|diff\..*\.(textconv|command)|merge\..*\.driver|"
                             r"credential\.|uploadpack\.|receive\.|sequence\.editor|gpg\.|ssh\.)", re.IGNORECASE)
"""Git settings that run a program or change where Git reads its state: refused in ``git config`` writes."""


def git_argv_problems(invocation: Invocation, policy: SkillEvalPolicy) -> list[GateProblem]:
    """The security gate on a Git command: no ``-c`` (alias, hooks path, any setting) before the subcommand
    unless the policy's ``git_config_allowed`` names the key, no option that moves Git's state, and no
    ``git config`` that sets an alias, a hook path, a filter or any other setting that runs a program."""
    argv = list(invocation.argv)
    if argv[0] != "git":
        return []
    allowed = {k.lower() for k in policy.git_config_allowed or []}
    problems: list[GateProblem] = []
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        takes_value = arg in ("-c", "-C", *_GIT_CONFIG_OPTIONS) and not eq
        value = argv[i + 1] if takes_value and i + 1 < len(argv) else (inline if eq else arg[2:])
        if arg == "-c" or (arg.startswith("-c") and not arg.startswith("--")) or name in _GIT_CONFIG_OPTIONS:
            key = value.split("=", 1)[0].lower()
            if not (arg == "-c" and key in allowed):
                problems.append(invocation.problem(
                    "security", f"{arg!r} sets Git configuration or state on the command line ({value!r}); an alias "
                                "or hooks path there runs any program. Only the policy's git_config_allowed keys "
                                "may be given with -c"))
        i += 2 if takes_value else 1
    if i < len(argv) and argv[i] == "config":
        rest = argv[i + 1:]
        scope = [a for a in rest if a in ("--global", "--system", "--file", "-f", "--blob")]
        keys = [a for a in rest if not a.startswith("-")][:1]
        if scope or (keys and _RISKY_GIT_KEYS.match(keys[0])):
            problems.append(invocation.problem(
                "security", f"'git config {' '.join(rest)}' would configure Git beyond the repository's plain "
                            "settings (an alias, a hook, a filter, another scope): refused"))
    return problems


def credential_in(data: bytes) -> str | None:
    """The first credential-shaped text in ``data`` (shown shortened), or None."""
    text = data.decode("utf-8", "replace")
    for found in _CREDENTIAL.finditer(text):
        shown = text[found.start():found.end() + 24].split()[0] if found.group(0).strip() else found.group(0)
        if not _PLACEHOLDER.search(shown):
            return found.group(0)[:12] + "..."
    return None


def fixture_file_problems(rel: str, data: bytes, *, file: str) -> list[GateProblem]:
    """The security gate on one fixture file (``rel`` relative to the fixture)."""
    problems = []
    for pattern, what in ((_SECRET_FILES, "a credential file"), (_TRANSCRIPT_FILES, "a transcript"),
                          (_RAW_EVIDENCE, "raw evidence"), (_INSTALLED_SKILL, "installed skill content"),
                          (_GIT_CONFIG_FILES, "Git configuration (the sandbox is HOME: it would configure Git)")):
        if pattern.search(rel):
            problems.append(GateProblem("security", f"a fixture may not hold {what} ({rel}); the runner installs "
                                                    "the skill and keeps transcripts and evidence itself", file=file))
    secret = credential_in(data)
    if secret is not None:
        problems.append(GateProblem("security", f"holds a credential ({secret}); fixtures are committed and "
                                                "copied into every sandbox: remove it", file=file))
    return problems


def skill_file_problems(rel: str, data: bytes, *, file: str) -> list[GateProblem]:
    """The security gate on one file of a skill (``rel`` relative to the skills folder)."""
    problems = []
    if _EVAL_DEFINITIONS.search(rel.split("/", 1)[-1]):
        problems.append(GateProblem("security", "eval definitions live outside the skill (in the registry): a "
                                                "skill is installed as it is, evals included", file=file))
    secret = credential_in(data)
    if secret is not None:
        problems.append(GateProblem("security", f"holds a credential ({secret}); remove it", file=file))
    return problems


def provider_problems(text: str, *, file: str, first_line: int = 1) -> list[InputError]:
    """Provider independence: a skill names no model provider or model (each mention, with its line)."""
    problems: list[InputError] = []
    for offset, line in enumerate(text.split("\n")):
        for match in _PROVIDERS.finditer(line):
            problems.append(InputError(f"provider independence: {match.group(0)!r} names a model provider or "
                                       "model; a skill must work with any agent", file=file, line=first_line + offset))
    return problems


def undocumented_operations(invocations: Iterable[Invocation], policy: SkillEvalPolicy) -> list[str]:
    """The operations some invocation uses whose policy entry has no command table (the command gate cannot run)."""
    used = {policy.operation_of_program(i.argv[0]) for i in invocations}
    return sorted(name for name in used if name is not None and policy.operations[name].commands is None)
