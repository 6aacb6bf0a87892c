#!/usr/bin/env bash
# The run step of the GitHub Action (action.yml at the repository root), kept in a file of its own
# so that tests/e2e/cli/test_action.py runs exactly this script. It reads the action's inputs from the
# environment (never from ${{ }} text pasted into a script, so an input cannot inject shell):
#
#   TC_URL, TC_COMMAND       the target (one of them)
#   TC_SERVER_COMMAND        with TC_URL: the HTTP server to start first and stop after
#   TC_CLIENT_COMMAND        instead of a server target: the tasks client to judge (`tasks-conformance client`)
#   TC_TOOL_NAME             --tool-name
#   TC_ARGS                  further flags, split like a shell would (quotes allowed, no expansion)
#   TC_PROFILE, TC_CONFIG    --profile / --config, passed only when not empty
#   TC_BASELINE              --baseline, passed only when not empty
#   TC_REPORT_DIR            where the reports go (default: tasks-conformance-report)
#   TC_BIN, TC_PYTHON        the tasks-conformance program and a Python (defaults: from PATH)
#
# It writes JUnit, JSON, Markdown, an SVG badge, the HTML report and the wire log into TC_REPORT_DIR, appends the Markdown report
# to $GITHUB_STEP_SUMMARY (the reporter itself would overwrite the file), names the files in
# $GITHUB_OUTPUT, and exits with the tool's exit code.
set -uo pipefail

bin="${TC_BIN:-tasks-conformance}"
py="${TC_PYTHON:-python3}"
dir="${TC_REPORT_DIR:-tasks-conformance-report}"
mkdir -p "$dir" || exit 2
junit="$dir/junit.xml"
json="$dir/report.json"
markdown="$dir/report.md"
wire="$dir/wire.ndjson"
badge="$dir/badge.svg"
html="$dir/report.html"
rm -f "$junit" "$json" "$markdown" "$wire" "$badge" "$html"

argv=()
if [ -n "${TC_CLIENT_COMMAND:-}" ]; then
  if [ -n "${TC_URL:-}${TC_COMMAND:-}${TC_SERVER_COMMAND:-}${TC_TOOL_NAME:-}" ]; then
    echo "::error::tasks-conformance: client-command judges a client; leave out url, command, server-command and tool-name"
    exit 2
  fi
  argv+=(client --command "$TC_CLIENT_COMMAND")
fi
argv+=(--format human --reporter "junit-xml=$junit" --reporter "json=$json" --reporter "markdown=$markdown"
       --reporter "badge=$badge" --reporter "html=$html" --wire-log "$wire")
if [ -n "${TC_URL:-}" ]; then argv+=(--url "$TC_URL"); fi
if [ -n "${TC_COMMAND:-}" ]; then argv+=(--command "$TC_COMMAND"); fi
if [ -n "${TC_SERVER_COMMAND:-}" ]; then argv+=(--server-command "$TC_SERVER_COMMAND"); fi
if [ -n "${TC_TOOL_NAME:-}" ]; then argv+=(--tool-name "$TC_TOOL_NAME"); fi
if [ -n "${TC_PROFILE:-}" ]; then argv+=(--profile "$TC_PROFILE"); fi
if [ -n "${TC_CONFIG:-}" ]; then argv+=(--config "$TC_CONFIG"); fi
if [ -n "${TC_BASELINE:-}" ]; then argv+=(--baseline "$TC_BASELINE"); fi
if [ -n "${TC_ARGS:-}" ]; then
  words="$(mktemp)"
  if ! "$py" -c 'import os, shlex, sys; sys.stdout.write("".join(w + "\0" for w in shlex.split(os.environ["TC_ARGS"])))' >"$words"; then
    rm -f "$words"
    echo "::error::tasks-conformance: the args input cannot be split into words (an unclosed quote?)"
    exit 2
  fi
  while IFS= read -r -d '' word; do argv+=("$word"); done <"$words"
  rm -f "$words"
fi

"$bin" "${argv[@]}"
code=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  if [ -s "$markdown" ]; then
    cat "$markdown" >>"$GITHUB_STEP_SUMMARY"
  else
    printf '### tasks-conformance\n\nNo report: tasks-conformance exited with code %s before writing one; see the step log.\n' \
      "$code" >>"$GITHUB_STEP_SUMMARY"
  fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  present() { if [ -s "$1" ]; then printf '%s' "$1"; fi; }
  {
    echo "exit-code=$code"
    echo "report-dir=$dir"
    echo "junit=$(present "$junit")"
    echo "json=$(present "$json")"
    echo "markdown=$(present "$markdown")"
    echo "wire-log=$(present "$wire")"
    echo "badge=$(present "$badge")"
    echo "html=$(present "$html")"
  } >>"$GITHUB_OUTPUT"
fi
exit "$code"
