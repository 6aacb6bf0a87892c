"""The README's fan-out / fan-in recipes, run: the GitHub Actions workflow and the Kubernetes Indexed
Job. Their YAML is read from the README (a small reader of the YAML they use, checked against
PyYAML where it is installed), its structure checked (the matrix and the merge job that needs it,
the artifacts passed between them; the Indexed Job's completions and the shard each pod takes, the
volume both Jobs share), and their commands run as the runners would: one process per shard, each
in a place of its own, their reports carried to the merge, then the merge. The merged report is the
one `suite` run of the same file writes (outcomes, checks, exit code)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import ROOT
from helpers.runs import tool
from helpers.suites import fleet_suite, suite_verdicts

README = (ROOT / "README.md").read_text(encoding="utf-8")


# -- the YAML the recipes use, read without PyYAML --------------------------------------------------


def yaml_blocks(first_line: str) -> str:
    """The README's ```yaml block whose first line is `first_line`."""
    for block in re.findall(r"```yaml\n(.*?)```", README, re.S):
        if block.startswith(first_line + "\n"):
            return str(block)
    raise AssertionError(f"no yaml block starts with {first_line!r}")


class _Reader:
    """Block mappings and sequences, plain, quoted and flow scalars, `|` and `>` block scalars."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.i = 0

    def _skip(self) -> None:
        """Past blank lines and comment lines."""
        while self.i < len(self.lines):
            line = self.lines[self.i].strip()
            if line and not line.startswith("#"):
                return
            self.i += 1

    @staticmethod
    def _indent(line: str) -> int:
        return len(line) - len(line.lstrip(" "))

    def node(self) -> Any:
        self._skip()
        line = self.lines[self.i]
        return self._seq(self._indent(line)) if line.lstrip().startswith("- ") else self._map(self._indent(line))

    def _seq(self, ind: int) -> list[Any]:
        out: list[Any] = []
        while True:
            self._skip()
            if self.i >= len(self.lines):
                return out
            line = self.lines[self.i]
            if self._indent(line) != ind or not line.lstrip().startswith("- "):
                return out
            rest = line.lstrip()[2:]
            if re.match(r"^[\w.\-/]+:( |$)", rest):  # "- key: value": a mapping indented past the dash
                self.lines[self.i] = " " * (ind + 2) + rest
                out.append(self._map(ind + 2))
            elif rest.strip() in ("|", ">"):
                self.i += 1
                out.append(self._block(rest.strip(), ind))
            else:
                self.i += 1
                out.append(self._scalar(rest))

    def _map(self, ind: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while True:
            self._skip()
            if self.i >= len(self.lines):
                return out
            line = self.lines[self.i]
            if self._indent(line) != ind or line.lstrip().startswith("- "):
                return out
            m = re.match(r"^([^:#]+?):(?:\s+(.*))?$", line.strip())
            assert m, f"not a mapping entry: {line!r}"
            key, rest = m.group(1), _uncomment(m.group(2) or "")
            self.i += 1
            if rest in ("|", ">"):
                out[key] = self._block(rest, ind)
            elif rest:
                out[key] = self._scalar(rest)
            else:
                self._skip()
                nxt = self.lines[self.i] if self.i < len(self.lines) else ""
                deeper = self._indent(nxt) > ind or (self._indent(nxt) == ind and nxt.lstrip().startswith("- "))
                out[key] = self.node() if nxt.strip() and deeper else None
        return out

    def _block(self, style: str, ind: int) -> str:
        lines: list[str] = []
        while self.i < len(self.lines) and (not self.lines[self.i].strip() or self._indent(self.lines[self.i]) > ind):
            lines.append(self.lines[self.i])
            self.i += 1
        while lines and not lines[-1].strip():
            lines.pop()
        cut = min(self._indent(x) for x in lines if x.strip())
        body = [x[cut:] for x in lines]
        return ("\n".join(body) if style == "|" else " ".join(x for x in body if x)) + "\n"

    @staticmethod
    def _scalar(text: str) -> Any:
        text = _uncomment(text)
        if text.startswith("[") and text.endswith("]"):
            inner = text[1:-1].strip()
            return [_Reader._scalar(p.strip()) for p in re.findall(r'"(?:[^"\\]|\\.)*"|[^,]+', inner)] if inner else []
        if text.startswith('"'):
            return json.loads(text)
        if text.startswith("'"):
            return text[1:-1].replace("''", "'")
        if text in ("true", "false"):
            return text == "true"
        return int(text) if re.fullmatch(r"-?\d+", text) else text


def _uncomment(text: str) -> str:
    """`text` without a trailing ` # comment` (outside quotes)."""
    quote = None
    for n, ch in enumerate(text):
        if ch in "\"'" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (n == 0 or text[n - 1] == " "):
            return text[:n].rstrip()
    return text.strip()


def read_yaml(text: str) -> list[Any]:
    docs = [_Reader(d).node() for d in re.split(r"^---$", text, flags=re.M) if d.strip(" \n#") and
            any(line.strip() and not line.lstrip().startswith("#") for line in d.split("\n"))]
    try:
        import yaml
    except ImportError:
        return docs  # PyYAML is not a test dependency; where it is installed, both readers agree
    theirs = [{("on" if k is True else k): v for k, v in d.items()} for d in yaml.safe_load_all(text) if d]
    assert theirs == docs
    return docs


# -- running them ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The suite file both recipes run, a `tasks-conformance` on PATH (this checkout's), and one
    `suite` run of the file to compare with."""
    tmp = tmp_path_factory.mktemp("recipes")
    suite = fleet_suite(tmp / "conformance.toml")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "tasks-conformance"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tasks_conformance "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    whole = tmp / "whole.json"
    proc = tool("suite", str(suite), "-q", "--reporter", f"json={whole}")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    env.pop("CI", None)
    yield {"suite": suite, "env": env, "code": proc.returncode, "doc": json.loads(whole.read_text())}


def run_all(scripts: list[tuple[str, Path, dict[str, str]]], shell: list[str]) -> list[int]:
    """Run every script at once, each in its directory with its environment; every one reaped."""
    procs = [subprocess.Popen([*shell, script], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True) for script, cwd, env in scripts]
    codes = []
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=240)
            codes.append(proc.returncode)
            assert proc.returncode in (0, 1, 3), out
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    return codes


def step(job: dict[str, Any], name: str) -> dict[str, Any]:
    found = [s for s in job["steps"] if s.get("name") == name]
    assert len(found) == 1, name
    return found[0]


def test_the_github_actions_fan_out_and_fan_in(fleet: dict[str, Any], tmp_path: Path) -> None:
    (workflow,) = read_yaml(yaml_blocks("# .github/workflows/conformance.yml"))
    shards, merge = workflow["jobs"]["shards"], workflow["jobs"]["merge"]
    matrix = shards["strategy"]["matrix"]["shard"]
    assert matrix == [1, 2, 3] and shards["strategy"]["fail-fast"] is False
    assert merge["needs"] == "shards" and merge["if"] == "always()"  # merged whatever the shards found
    upload = step(shards, "Upload this shard's reports")
    download = step(merge, "Download the shards' reports")
    assert upload["if"] == "always()" and upload["uses"].startswith("actions/upload-artifact@")
    assert download["uses"].startswith("actions/download-artifact@") and download["with"]["merge-multiple"] is True
    prefix = download["with"]["pattern"].rstrip("*")
    assert upload["with"]["name"].startswith(prefix)
    results = tmp_path / download["with"]["path"]
    results.mkdir()
    jobs = []
    for shard in matrix:  # each matrix job on a runner of its own: a directory with the checkout's file
        runner = tmp_path / f"runner-{shard}"
        runner.mkdir()
        shutil.copy(fleet["suite"], runner / "conformance.toml")
        script = step(shards, "Run this shard")["run"].replace("${{ matrix.shard }}", str(shard))
        jobs.append((script.replace("${{ strategy.job-total }}", str(len(matrix))), runner, fleet["env"]))
    # GitHub runs `run:` with bash -e -o pipefail; each shard exits with its own verdict.
    codes = run_all(jobs, ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"])
    assert sorted(codes) == [0, 0, 1]
    for shard in matrix:  # what upload-artifact takes and download-artifact puts in one place
        pattern = upload["with"]["path"].replace("${{ matrix.shard }}", str(shard))
        for path in (tmp_path / f"runner-{shard}").glob(pattern):
            shutil.copy(path, results / path.name)
    summary = tmp_path / "summary.md"
    merged = tmp_path / "merged.json"
    script = step(merge, "Merge the shards")["run"].strip() + f" --reporter json={merged}"
    env = {**fleet["env"], "GITHUB_STEP_SUMMARY": str(summary)}
    (code,) = run_all([(script, tmp_path, env)], ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"])
    assert code == fleet["code"] == 1
    assert suite_verdicts(json.loads(merged.read_text())) == suite_verdicts(fleet["doc"])
    assert summary.read_text().startswith("## ❌ MCP Tasks conformance, suite: failed")
    kept = step(merge, "Upload the fleet page")["with"]["path"].split()
    assert all((tmp_path / name).exists() for name in kept) and "fleet-data" in (tmp_path / "fleet.html").read_text()
    assert [p.suffix for p in (tmp_path / "history").iterdir()] == [".json"]  # what the cache keeps


def test_the_kubernetes_indexed_job_fan_out_and_fan_in(fleet: dict[str, Any], tmp_path: Path) -> None:
    claim, shards, merge = read_yaml(yaml_blocks("# conformance.yaml"))
    assert (claim["kind"], shards["kind"], merge["kind"]) == ("PersistentVolumeClaim", "Job", "Job")
    spec = shards["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 3
    (shard_pod,), (merge_pod,) = spec["template"]["spec"]["containers"], merge["spec"]["template"]["spec"]["containers"]
    for job in (shards, merge):  # both Jobs mount the one claim
        (volume,) = job["spec"]["template"]["spec"]["volumes"]
        assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    assert "merge" not in shards["metadata"]["labels"].values() and merge["metadata"]["labels"]["step"] == "merge"
    mount = shard_pod["volumeMounts"][0]["mountPath"]
    assert merge_pod["volumeMounts"][0]["mountPath"] == mount
    (shard_script,), (merge_script,) = shard_pod["args"], merge_pod["args"]
    assert shard_pod["command"] == merge_pod["command"] == ["sh", "-c"]
    assert f"--shard $shard/{spec['completions']}" in shard_script and "$((JOB_COMPLETION_INDEX+1))" in shard_script
    volume = tmp_path / "volume"
    volume.mkdir()
    workdir = tmp_path / shard_pod["workingDir"].strip("/")
    workdir.mkdir()
    shutil.copy(fleet["suite"], workdir / "conformance.toml")
    pods = [(shard_script.replace(mount, str(volume)), workdir, {**fleet["env"], "JOB_COMPLETION_INDEX": str(index)})
            for index in range(spec["completions"])]  # Kubernetes sets the index of each pod
    assert run_all(pods, ["sh", "-c"]) == [0, 0, 0]  # every shard reached a verdict
    assert sorted(p.name for p in volume.iterdir()) == ["shard-1.json", "shard-2.json", "shard-3.json"]
    (code,) = run_all([(merge_script.replace(mount, str(volume)), tmp_path, fleet["env"])], ["sh", "-c"])
    assert code == fleet["code"] == 1
    assert suite_verdicts(json.loads((volume / "conformance.json").read_text())) == suite_verdicts(fleet["doc"])
    assert not list(volume.glob("shard-*.json"))  # the next run's shards start afresh
    assert (volume / "fleet.html").exists() and len(list((volume / "history").iterdir())) == 1
