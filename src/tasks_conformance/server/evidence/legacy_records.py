"""The records of traffic only the 2025-11-25 wire has: tasks/result while the task runs, tasks/list
paged to its end, a related-task _meta against params.taskId, a task with a progressToken."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from tasks_conformance.server.evidence.record_base import ProbeRecord

if TYPE_CHECKING:
    from tasks_conformance.core.rpc.peer import Reply


@dataclass
class ResultWhileRunning(ProbeRecord):
    """Legacy: tasks/result sent at once after creation, while the task still runs (it must block)."""

    probe: ClassVar[str] = "result-while-running"
    task_id: str | None = None
    result: Reply | None = None


# Listing is followed page by page, but a server whose cursors never end must not keep us forever.
MAX_LIST_PAGES = 20
MAX_LISTED_TASKS = 2_000
# When the whole list fits on its first page, this many more tasks of the task tool are created and
# the list read again, so that a server paging at a small size has to page (S-LEG-MUST-16/17).
LIST_EXTRA_TASKS = 5


@dataclass
class TaskListing(ProbeRecord):
    """Legacy tasks/list: every page by nextCursor (bounded), and a tasks/get of each task of ours."""

    probe: ClassVar[str] = "task-listing"
    no_list_capability: bool = False
    task_id: str | None = None
    pages: list[Reply] = field(default_factory=list)  # the last reading, from its first page to its end
    stopped: str | None = None  # why paging stopped before the end (a bound, a repeated cursor)
    first_pages: list[Reply] = field(default_factory=list)  # the reading before the extra tasks, if any
    extra_calls: list[Reply] = field(default_factory=list)  # the tools/call creating the extra tasks
    # Every task of ours the listing must show (the probe task first, then the extras), and the
    # tasks/get that read each once the last listing was done: those it could read must be listed.
    ours: list[str] = field(default_factory=list)
    reads: list[Reply] = field(default_factory=list)


@dataclass
class ListBadCursor(ProbeRecord):
    """Legacy tasks/list with a made-up cursor: it needs no task of ours, only tasks/list."""

    probe: ClassVar[str] = "list-bad-cursor"
    no_list_capability: bool = False
    bad_cursor: str | None = None
    bad_cursor_reply: Reply | None = None


@dataclass
class RelatedMetaOverride(ProbeRecord):
    """Legacy tasks/get whose related-task _meta names another task than params.taskId."""

    probe: ClassVar[str] = "related-meta-override"
    task_id: str | None = None
    other_id: str | None = None
    meta_names_other: Reply | None = None  # params: our task; _meta: a made-up id
    params_names_other: Reply | None = None  # params: a made-up id; _meta: our task


# Progress notifications are kept by sequence number; a server flooding them must not grow the record.
MAX_PROGRESS_FRAMES = 500
# tasks/get reads of a task whose tasks/result answered before it ended, at most (also bounded by --poll-timeout)
MAX_PROGRESS_POLLS = 200


@dataclass
class TaskProgress(ProbeRecord):
    """Legacy: a second task created with a progressToken, waited for with tasks/result, then read
    twice (the second read spaced by its poll interval), and the notifications/progress meanwhile."""

    probe: ClassVar[str] = "task-progress"
    token: str | None = None
    task_id: str | None = None
    create: Reply | None = None
    result: Reply | None = None
    ended: Reply | None = None  # the first tasks/get, once tasks/result answered, that showed the task ended
    # tasks/get reads before it that showed the task still running (tasks/result did not block)
    polls: list[Reply] = field(default_factory=list)
    later: Reply | None = None  # tasks/get after a poll interval more
    frames: list[int] = field(default_factory=list)  # every notifications/progress during the probe
