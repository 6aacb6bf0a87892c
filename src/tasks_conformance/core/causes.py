"""Why a check could not run, as fields: a kind from a closed set, the sentence that says what
happened, and the one thing the user can change.

The site that finds the cause knows the fix (the flag to give, the tool to name, the timeout to
raise), so it says so here; reports read these fields and never a message. A could-not-run
verdict's message is built from them (`Cause.message`), as a person reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CauseKind(StrEnum):
    """What kept a check from running. Each kind but SETTING and CHECK_NEEDS has one fix."""

    UNREACHABLE = "unreachable"  # nothing answered at the target
    HTTP_STATUS = "http-status"  # an HTTP answer without JSON-RPC in it: not an MCP endpoint, or refused
    OAUTH = "oauth"  # no access token could be had with the OAuth refresh flags
    STDOUT_NOT_JSON = "stdout-not-json"  # a stdio server printed something other than JSON-RPC
    NO_TASKS_WIRE = "no-tasks-wire"  # the server declares neither tasks wire
    HARNESS = "harness"  # a bug of tasks-conformance, not the server's
    INTERRUPTED = "interrupted"  # the run was stopped before the check's traffic finished
    FRAMES_DROPPED = "frames-dropped"  # the frames a verdict rests on were past the wire log's bounds
    SERVER_GONE = "server-gone"  # the server exited or its connection ended mid-run (its own check fails)
    SERVER_COMMAND = "server-command"  # the server the run started itself (--server-command) never listened
    SETTING = "setting"  # a flag, a tool or a timeout to change: the cause names it (`fix` or `flags`)
    CHECK_NEEDS = "check-needs"  # what the check needs did not happen: `explain` says what that is


INTERRUPTED_CAUSE = "the run was interrupted before every check could finish"
INTERRUPTED_FIX = "run again and let it finish"


@dataclass(frozen=True)
class Cause:
    """One reason a check could not run."""

    text: str  # what happened, in one sentence
    kind: CauseKind = CauseKind.CHECK_NEEDS
    # SETTING: the instruction, said after the text in the check's message ("…; raise --timeout").
    fix: str = ""
    # SETTING without an instruction of its own: the flags the text names, to change.
    flags: tuple[str, ...] = ()
    http_status: int | None = None  # HTTP_STATUS: what the endpoint answered

    @property
    def message(self) -> str:
        """The sentence a could-not-run verdict shows: the text, and the instruction after it."""
        return f"{self.text}; {self.fix}" if self.fix else self.text

    def statement(self) -> str:
        """The cause as a report states it once (the interruption in one wording for all)."""
        return INTERRUPTED_CAUSE if self.kind is CauseKind.INTERRUPTED else self.text

    def fix_for(self, check_id: str, target: str) -> str:
        """The one thing to change, for a report's fix list."""
        if self.fix:
            return self.fix
        where = f" at {target}" if target else ""
        kind = self.kind
        if kind is CauseKind.HTTP_STATUS and self.http_status is not None:
            return _http_status_fix(self.http_status, where)
        if kind is CauseKind.SETTING and self.flags:
            return f"change the flag this names ({', '.join(self.flags)})"
        if kind is CauseKind.CHECK_NEEDS or kind is CauseKind.SETTING:
            return f"`tasks-conformance explain {check_id}` says what this check needs"
        return _FIXES.get(kind, "").format(where=where)


_FIXES: dict[CauseKind, str] = {
    CauseKind.UNREACHABLE: "start the server or correct the target (--url, --command, --tcp or --unix): "
                           "nothing answered{where}",
    # A status the transport gave no number for: as unreachable.
    CauseKind.HTTP_STATUS: "start the server or correct the target (--url, --command, --tcp or --unix): "
                           "nothing answered{where}",
    CauseKind.OAUTH: "correct --refresh-token, --client-id and --client-secret (or --credentials-file): "
                     "no access token could be had with them",
    CauseKind.STDOUT_NOT_JSON: "the server printed something other than JSON-RPC on stdout: over stdio, stdout "
                               "carries only MCP messages; send logs and banners to stderr",
    CauseKind.NO_TASKS_WIRE: "the server declares neither tasks wire: turn tasks on in the server, or pin the era "
                             "it implements with --protocol-version",
    CauseKind.HARNESS: "a tasks-conformance bug, not the server's: run again with --debug and report it",
    CauseKind.INTERRUPTED: INTERRUPTED_FIX,
    CauseKind.FRAMES_DROPPED: "the server sent more frames than the wire log keeps; check it with fewer, smaller "
                              "messages",
    CauseKind.SERVER_COMMAND: "the run started the server itself with --server-command: correct that command (or "
                              "its --cwd and -e) so that it starts and listens{where}, or raise "
                              "--startup-timeout if it starts slowly",
    CauseKind.SERVER_GONE: "keep the server running to the end of the run (tasks-server-stays-up shows how it "
                           "ended, with its exit code and last output), then run again",
}


def _http_status_fix(status: int, where: str) -> str:
    """The fix when the handshake got an HTTP status but no JSON-RPC: something answered."""
    if status in (401, 403, 407):
        return (f"the endpoint{where} refused the request (HTTP {status}): give the credentials it needs "
                "(--access-token or --header) or correct the --url")
    if status >= 400:
        return (f"the endpoint{where} answered HTTP {status} with no JSON-RPC response: it is not an MCP Streamable "
                "HTTP endpoint; correct the --url path (often /mcp) or start the MCP server there")
    # A success status and still no JSON-RPC (a web page, or a stream that never answered).
    return (f"the endpoint{where} answered HTTP {status} but sent no JSON-RPC response: check that --url names "
            "the MCP Streamable HTTP endpoint (often /mcp) and that the server answers there")


def by_flag(text: str, fix: str = "", *flags: str) -> Cause:
    """A cause the user removes by a flag, a tool named or a timeout changed (kind SETTING): `fix`
    says how (shown in the message), or `flags` names what to change. (Not the settings schema's
    `setting`, which declares a flag: this one says which to change.)"""
    if not fix.strip() and not flags:
        raise ValueError(f"a setting cause names its fix or its flags: {text!r}")
    return Cause(text, CauseKind.SETTING, fix=fix, flags=flags)


def unmet(text: str, fix: str) -> Cause:
    """A cause that is what the check needs not happening (kind CHECK_NEEDS: an unmet need), with
    the action that makes it happen (a flag, a tool, a server setting): every could-not-run says
    what to do. (Not a check's `needs=`, which declares what it reads.)"""
    if not fix.strip():
        raise ValueError(f"a could-not-run cause needs its fix: {text!r}")
    return Cause(text, CauseKind.CHECK_NEEDS, fix=fix)


def harness(text: str) -> Cause:
    """A cause that is our own fault (the fix: report it)."""
    return Cause(text, CauseKind.HARNESS)


class Reason(str):
    """A reason kept in a probe record or a tool choice (`not_run`, `reason`), a plain string to
    everyone who shows it, that also carries its typed cause for a could-not-run verdict."""

    cause: Cause

    def __new__(cls, cause: Cause) -> Reason:
        self = super().__new__(cls, cause.message)
        self.cause = cause
        return self

    def __reduce__(self) -> tuple[object, ...]:
        return (Reason, (self.cause,))


def cause_of(given: Cause | Reason) -> Cause:
    """The typed cause of what a could-not-run site gives: a Cause, or a Reason that carries one."""
    return given if isinstance(given, Cause) else given.cause


def reason(text: str, fix: str) -> Reason:
    """A probe's reason for not running, with the action that lets it run."""
    return Reason(unmet(text, fix))
