"""``ReferenceServer``: both protocol eras combined, transport-agnostic, and its hook map.

``ReferenceServer`` answers one JSON-RPC request at a time given a ``RequestContext``; the
transports (``stdio.py``, ``sockets.py``, ``http_app.py``) decide the era of each message with
``route()``, call ``handle_initialize`` / ``handle_extension`` / ``handle_legacy`` /
``handle_uninitialized``, and turn an ``RpcError`` into an error response (``http_status_for``
picks the HTTP status).

The class only composes three layers: ``core.ServerCore`` (what both eras share: lifecycle,
routing, shared errors, running the tools and their tasks), ``extension.ExtensionMixin`` (the
2026-07-28 wire with the tasks extension) and ``legacy.LegacyMixin`` (the 2025-11-25 wire).

Hook points
-----------
Every rule the conformance CLI judges lives in one small method, so that a fixture subclass
(``fixtures/broken_server.py``) can break exactly one rule by overriding one method:

Both eras (``core.py``)
  ``adjust_config(config)``             the effective ServerConfig (force an era, slow polling, ...)
  ``server_info()``                     Implementation object (serverInfo)
  ``extension_versions()``                 versions served on the 2026-07-28 envelope
  ``missing_capability_error(required, message)``  the -32021 error body
  ``format_timestamp(ts)``              createdAt / lastUpdatedAt text
  ``on_unknown_task(ctx, task_id)``     unknown taskId on any tasks/* (-32602)
  ``tool_duration_ms(spec, arguments, as_task=)``  how long a tool works
  ``execute_tool(spec, arguments, io)`` the tools themselves
  ``settle_tool_result(record, result)``  isError -> completed (extension) / failed (legacy)
  ``http_status_for(era, error)``       HTTP status of a JSON-RPC error
  ``replayed_tasks(journal)``           --task-store: the tasks a restart brings back from the journal

Extension wire (2026-07-28, ``extension.py``)
  ``supports_tasks_extension``          class flag: serve the tasks extension at all
  ``discover_capabilities()``           ServerCapabilities in the server/discover result
  ``extension_tool_descriptor(spec)``      tools/list entries
  ``validate_routing_headers(ctx, meta)``  HTTP MCP-Protocol-Version / Mcp-Method / Mcp-Name -> -32020
  ``expected_mcp_name(ctx)``            which body value Mcp-Name must equal, and whether it is required
  ``declares_tasks_extension(caps)``    does this request's clientCapabilities declare the extension
  ``require_tasks_declared(ctx)``       -32021 for undeclared tasks/* and task subscriptions
  ``should_create_task(ctx, spec, declared)``  answer tools/call with a CreateTaskResult?
  ``on_undeclared_required_tool(ctx, spec, arguments)``  -32021 for a task-only tool called undeclared
  ``header_mismatch_error(message)``    the -32020 error body
  ``unsupported_version_error(requested)``  the -32022 error body
  ``task_fields(record)``               the flat Task fields (taskId, status, timestamps, ttlMs, ...)
  ``build_create_task_result(record)``  the CreateTaskResult (resultType "task", flat)
  ``build_detailed_task(record)``       DetailedTask (inline result / error / inputRequests)
  ``build_get_task_result(record)``     tasks/get result (resultType "complete")
  ``build_task_notification(record, subscription_id)``  notifications/tasks params
  ``apply_input_responses(record, responses)``  tasks/update: deliver outstanding answers
  ``build_update_ack(record)`` / ``build_cancel_ack(record)``  the empty acks

Legacy wire (2025-11-25, ``legacy.py``)
  ``supports_legacy_tasks``             class flag: serve legacy tasks at all
  ``legacy_capabilities()``             ServerCapabilities in the 2025-11-25 InitializeResult
  ``legacy_tool_descriptor(spec)``      tools/list entries (with execution.taskSupport)
  ``legacy_handlers()``                 the method table (drop an optional method)
  ``legacy_create_task_result(record)`` ``{task: {...}}``
  ``legacy_task_object(record)``        flat Task with ttl / pollInterval
  ``legacy_result_payload(record, result)``  tasks/result payload (+ related-task _meta)
  ``legacy_cancel_result(record)``      tasks/cancel result
  ``on_legacy_cancel_terminal(ctx, record)``  -32602 for cancelling a terminal task
  ``on_legacy_required_without_task(ctx, spec)``  -32601 for a required tool called without task
  ``on_legacy_forbidden_with_task(ctx, spec)``    -32601 for a forbidden tool called with task
"""

from __future__ import annotations

from tasks_conformance.server.reference.extension import ExtensionMixin
from tasks_conformance.server.reference.legacy import LegacyMixin


class ReferenceServer(ExtensionMixin, LegacyMixin):
    """A small, spec-compliant MCP server for both tasks wires. See the module docstring for hooks."""
