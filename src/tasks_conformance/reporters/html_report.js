// The HTML report's own script (tasks_conformance/reporters/html.py embeds it, allowed by its hash).
// It reads the run from the JSON data element and draws it with DOM calls and textContent only:
// no string from the data is ever parsed as markup.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const LANE_H = 22, LABEL_W = 170, AXIS_H = 20, MIN_PLOT_W = 640, MAX_PLOT_W = 24000, RIGHT_PAD = 90;
  const STATUSES = ["working", "input_required", "completed", "failed", "cancelled"];
  const data = JSON.parse(document.getElementById("report-data").textContent);

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function svg(tag, attrs, cls) {
    const node = document.createElementNS(SVG, tag);
    for (const k in attrs) node.setAttribute(k, String(attrs[k]));
    if (cls) node.setAttribute("class", cls);
    return node;
  }
  function link(url, text) {
    // Only the spec's public pages are links; anything else stays text.
    if (typeof url === "string" && url.startsWith("https://")) {
      const a = el("a", "", text);
      a.href = url; a.target = "_blank"; a.rel = "noopener noreferrer";
      return a;
    }
    return el("span", "", text);
  }
  function ms(v) { return v === null || v === undefined ? "" : (v >= 1000 ? (v / 1000).toFixed(2) + " s" : Math.round(v) + " ms"); }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }
  // What each direction of a frame was, in the words of the side under test: the wire log is the
  // checker's (server mode: it sent, the server answered) or the scripted server's (client mode).
  function directions(run) {
    return run.header.subject === "client" ? { out: "sent by the scripted server", in: "sent by the client" }
      : { out: "sent", in: "received" };
  }
  function rulesList(rules) {
    const ul = el("ul", "rules");
    for (const r of rules) {
      const rli = el("li", r.broken ? "broken" : "");
      rli.append(link(r.url, r.id), el("span", "level", r.level), el("span", "rule-text", r.text));
      ul.append(rli);
    }
    return ul;
  }
  function valuesList(pairs, cls) {
    const dl = el("dl", cls);
    for (const [k, v] of pairs) { dl.append(el("dt", "", k), el("dd", "", "")); dl.lastChild.append(el("pre", "", v)); }
    return dl;
  }

  function header(run) {
    const h = run.header, box = el("div", "header");
    const outcome = el("span", "outcome o-" + (["passed", "failed", "incomplete", "interrupted"].includes(h.outcome) ? h.outcome : "other"), h.outcome);
    const dl = el("dl");
    const rows = [["target", h.target], ["era", h.era + (h.wire !== "none" ? " (" + h.wire + " wire)" : "")],
      ["profile", h.profile], ["score", h.score === null ? "n/a" : h.score + "/100"], ["outcome", outcome],
      ["exit code", h.exitCode], ["checks", h.summary], ["tool probed", h.tool], ["started (UTC)", h.startedAt],
      ["duration", ms(h.durationMs)], ["tasks-conformance", h.toolVersion]];
    for (const [k, v] of rows) {
      if (v === null || v === undefined || v === "") continue;
      dl.append(el("dt", "", k));
      const dd = el("dd", k === "exit code" ? "exit-code" : "");
      if (v instanceof Node) dd.append(v); else dd.textContent = String(v);
      dl.append(dd);
    }
    box.append(dl);
    return box;
  }

  // Why checks could not run. Behind the failures on a failing run: a box the reader opens.
  function causesBox(run, behind) {
    const title = run.causes.some((c) => c.checks.length) ? "Could not run" : "Incomplete";
    const causes = el(behind ? "details" : "div", "causes");
    const n = run.causes.reduce((sum, c) => sum + c.checks.length, 0);
    const words = title + ": " + plural(run.causes.length, "cause", "causes") + (n ? ", " + plural(n, "check", "checks") : "");
    causes.append(behind ? el("summary", "", words) : el("h3", "", title));
    const ol = el("ol");
    for (const c of run.causes) {
      const li = el("li");
      li.append(el("div", "cause", c.cause), el("div", "fix", "To fix: " + c.fix));
      if (c.checks.length) li.append(el("div", "muted", c.checks.join(", ")));
      ol.append(li);
    }
    causes.append(ol);
    return causes;
  }

  // What a failing run leads with: each failed check (never a deferral), its broken rule and
  // expected/actual, open; its id shows it in the list and lights its frames.
  function leadBox(run, section) {
    const byId = new Map();
    for (const a of run.areas) for (const c of a.checks) byId.set(c.id, c);
    const box = el("div", "lead");
    box.append(el("h3", "", plural(run.lead.length, "check failed", "checks failed")));
    const ol = el("ol", "lead-list");
    for (const id of run.lead) {
      const c = byId.get(id);
      if (!c) continue;
      const li = el("li", "lead-item");
      li.dataset.checkId = c.id;
      const go = el("button", "lead-id", c.id);
      go.type = "button"; go.title = "show this check and light its frames";
      go.addEventListener("click", () => section.focus(c.id));
      const head = el("div", "lead-head");
      head.append(go, el("span", "lead-title", c.title));
      li.append(head);
      if (c.message) li.append(el("p", "message", c.message));
      const broken = c.rules.filter((r) => r.broken);
      if (broken.length) li.append(rulesList(broken));
      if (c.expectedActual && c.expectedActual.length) li.append(valuesList(c.expectedActual, "details expected-actual"));
      ol.append(li);
    }
    box.append(ol);
    return box;
  }

  function checkItem(check, section) {
    const li = el("li", "check b-" + check.bucket + (check.warnings.length ? " has-warnings" : ""));
    li.dataset.bucket = check.bucket;
    li.dataset.checkId = check.id;
    const head = el("button", "check-head");
    head.type = "button";
    head.append(el("span", "status", check.bucket), el("span", "check-id", check.id), el("span", "title", check.title));
    if (check.deferredTo) head.append(el("span", "deferred-to", "→ " + check.deferredTo));
    if (check.warnings.length) head.append(el("span", "warn-count", "⚠ " + check.warnings.length));
    if (check.evidence.length) head.append(el("span", "ev-count", check.evidence.length + (check.evidence.length === 1 ? " frame" : " frames")));
    const body = el("div", "check-body");
    body.hidden = check.bucket !== "failed";  // failures open, the rest closed
    head.setAttribute("aria-expanded", String(!body.hidden));
    if (check.bucket === "deferred") body.append(el("p", "deferred", "Deferred to " + (check.deferredTo || "the check that owns the rule") + ": it owns the rule this check found broken and reports the defect (one defect, one failure)."));
    if (check.message) body.append(el("p", "message", check.message));
    if (check.cause) body.append(el("p", "cause", "Cause: " + check.cause), el("p", "fix", "To fix: " + check.fix));
    if (check.rules.length) body.append(rulesList(check.rules));
    for (const w of check.warnings) body.append(el("p", "warning", "⚠ " + w.text));
    for (const p of check.policies) body.append(el("p", "muted", "policy " + p.id + " (docs/policies.md)"));
    const keys = Object.keys(check.details);
    if (keys.length) body.append(valuesList(keys.map((k) => [k, check.details[k]]), "details"));
    if (check.evidence.length) {
      const ev = el("div", "evidence");
      ev.append(el("span", "muted", "frames: "));
      for (const seq of check.evidence) {
        const b = el("button", "seq", "#" + seq);
        b.type = "button";
        b.addEventListener("click", (e) => { e.stopPropagation(); section.showFrame(seq); });
        ev.append(b);
      }
      body.append(ev);
    }
    if (check.baseline) body.append(el("p", "muted", "baseline: " + check.baseline));
    const open = (shown) => { body.hidden = !shown; head.setAttribute("aria-expanded", String(shown)); };
    // A closed check opens and is selected; an open one is selected; the selected one closes.
    head.addEventListener("click", () => {
      if (body.hidden || section.selected !== li) { open(true); section.select(check, li); }
      else { open(false); section.select(null, li); }
    });
    section.items.set(check.id, { li: li, check: check, open: open });
    li.append(head, body);
    return li;
  }

  // "warnings": the passed checks that warned (a failure or a could-not-run has its own filter).
  function visible(check, filter) {
    if (filter === "all") return true;
    if (filter === "warnings") return check.bucket === "passed" && check.warnings.length > 0;
    return check.bucket === filter;
  }
  const FILTER_WORDS = { "could-not-run": "could not run", known: "known (baseline)" };

  function checksPanel(run, section) {
    const panel = el("div", "checks");
    const filters = el("div", "filters");
    const name = "filter-" + section.index;
    const all = ["failed", "warnings", "could-not-run", "known", "deferred", "all"];
    const counts = Object.fromEntries(all.map((f) => [f, 0]));
    for (const a of run.areas) for (const c of a.checks) for (const f of all) if (visible(c, f)) counts[f]++;
    const lists = [], inputs = new Map();
    function apply(filter) {
      for (const [area, ul] of lists) {
        let shown = 0;
        for (const li of ul.children) { const ok = visible(li.check, filter); li.hidden = !ok; shown += ok ? 1 : 0; }
        area.hidden = shown === 0;
      }
    }
    // On a failing run the list opens on its failures; otherwise on every check.
    const initial = run.lead.length ? "failed" : "all";
    section.setFilter = (f) => { inputs.get(f).checked = true; apply(f); };
    // Could not run, known and deferred only where some check is.
    for (const f of all.filter((f) => ["failed", "warnings", "all"].includes(f) || counts[f])) {
      const label = el("label", "filter");
      const input = el("input");
      input.type = "radio"; input.name = name; input.value = f; input.checked = f === initial;
      input.addEventListener("change", () => apply(f));
      inputs.set(f, input);
      label.append(input, document.createTextNode(" " + (FILTER_WORDS[f] || f) + " (" + counts[f] + ")"));
      filters.append(label);
    }
    panel.append(filters);
    for (const a of run.areas) {
      const area = el("div", "area");
      const h = el("h3", "", a.title || a.area);
      h.title = "area " + a.area;
      area.dataset.area = a.area;
      area.append(h);
      const ul = el("ul", "check-list");
      for (const c of a.checks) { const li = checkItem(c, section); li.check = c; ul.append(li); }
      area.append(ul);
      panel.append(area);
      lists.push([area, ul]);
    }
    apply(initial);
    return panel;
  }

  function timelinePanel(run, section) {
    const t = run.timeline, panel = el("div", "timeline");
    const frames = t.frames, words = directions(run);
    panel.append(el("h3", "", "Exchange: " + frames.length + " frames, " + t.lanes.length + " lanes" +
      (t.omitted ? " (" + t.omitted + " not shown: see --wire-log)" : "")));
    if (!frames.length) { panel.append(el("p", "muted", "No frames were recorded.")); return panel; }
    const legend = el("div", "legend");
    legend.append(el("span", "lg out", words.out), el("span", "lg in", words.in), el("span", "lg poll", "poll"),
      el("span", "lg interval", "poll interval (tick: the pollInterval the server asked)"), el("span", "lg hl", "evidence of the selected check"));
    panel.append(legend);
    const scroller = el("div", "tl-scroll");
    panel.append(scroller);
    const view = el("div", "frame-view");
    const viewHead = el("div", "frame-head", "Click a frame (or a check's frame number) to see its bytes.");
    const pre = el("pre", "frame-bytes");
    // Marks a few microseconds apart overlap: these step through the frames in order instead.
    const nav = el("div", "frame-nav");
    const prev = el("button", "prev", "◀ previous frame"), next = el("button", "next", "next frame ▶");
    prev.type = next.type = "button";
    nav.append(prev, next);
    view.append(nav, viewHead, pre);
    panel.append(view);
    const marks = new Map();
    let root = null;
    // Drawn once the page is laid out, to the width the panel has (wider, and scrolled, when many frames).
    section.draw = () => {
      const t0 = frames[0].t, span = Math.max(t.duration - t0, 1);  // from the first frame to the last
      const room = scroller.clientWidth - LABEL_W - RIGHT_PAD - 10;
      const plotW = Math.min(MAX_PLOT_W, Math.max(MIN_PLOT_W, room, frames.length * 4));
      const x = (tms) => LABEL_W + 6 + ((tms - t0) / span) * plotW;
      const laneIndex = new Map(t.lanes.map((l, i) => [l, i]));
      const y = (lane) => AXIS_H + laneIndex.get(lane) * LANE_H;
      const width = LABEL_W + plotW + RIGHT_PAD, height = AXIS_H + t.lanes.length * LANE_H + 4;
      root = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img" }, "tl");
      root.append(svg("title", {}), svg("desc", {}));
      root.firstChild.textContent = "The exchange: one lane per " + (run.header.subject === "client" ? "scenario" : "probe");
      const ticks = 8;
      for (let i = 0; i <= ticks; i++) {
        const tv = t0 + (span * i) / ticks, gx = x(tv);
        root.append(svg("line", { x1: gx, x2: gx, y1: AXIS_H - 4, y2: height }, "grid"));
        const label = svg("text", { x: gx, y: AXIS_H - 7 }, "tick");
        label.textContent = ms(tv);
        root.append(label);
      }
      t.lanes.forEach((lane, i) => {
        const ly = AXIS_H + i * LANE_H;
        root.append(svg("rect", { x: 0, y: ly, width: width, height: LANE_H }, i % 2 ? "lane odd" : "lane"));
        const label = svg("text", { x: 4, y: ly + 15 }, "lane-label");
        label.textContent = lane.length > 26 ? lane.slice(0, 25) + "…" : lane;
        const title = svg("title", {}); title.textContent = lane; label.append(title);
        root.append(label);
      });
      for (const p of t.polls) {
        if (p.sinceMs === null) continue;
        const ly = y(p.lane) + LANE_H - 4, x2 = x(p.t), x1 = x(p.t - p.sinceMs);
        const line = svg("line", { x1: x1, x2: x2, y1: ly, y2: ly }, "interval");
        const title = svg("title", {});
        title.textContent = "poll " + p.n + ": " + ms(p.sinceMs) + " after the previous poll" +
          (p.askedMs !== null ? "; pollInterval asked: " + p.askedMs + " ms" : "");
        line.append(title);
        root.append(line);
        if (p.askedMs !== null) root.append(svg("line", { x1: x(p.t - p.sinceMs + p.askedMs), x2: x(p.t - p.sinceMs + p.askedMs), y1: ly - 4, y2: ly + 2 }, "asked"));
      }
      const labelEnd = new Map();
      for (const s of t.statuses) {
        const sx = x(s.t) + 3, crowded = (labelEnd.get(s.lane) || 0) > sx;
        if (!crowded) labelEnd.set(s.lane, sx + s.status.length * 5.5 + 4);
        const st = svg(crowded ? "circle" : "text", crowded ? { cx: sx - 3, cy: y(s.lane) + 4, r: 2 } : { x: sx, y: y(s.lane) + 8 }, "status-label st-" + (STATUSES.includes(s.status) ? s.status : "other"));
        if (!crowded) st.textContent = s.status;
        const title = svg("title", {}); title.textContent = "task " + s.taskId + ": " + s.status + " (frame #" + s.seq + ")";
        st.append(title);
        root.append(st);
      }
      for (const f of frames) {
        const cls = "f " + (f.dir === "out" ? "out" : "in") + (f.purpose === "poll" ? " poll" : "") + (f.flags ? " flagged" : "");
        const mark = svg("rect", { x: (x(f.t) - 1.5).toFixed(2), y: y(f.lane) + (f.dir === "out" ? 3 : 10), width: 3, height: 8 }, cls);
        mark.dataset.seq = String(f.seq);
        const title = svg("title", {});
        title.textContent = "#" + f.seq + " " + (f.dir === "out" ? words.out : words.in) + " " + (f.method || f.http || f.channel) + " at " + ms(f.t);
        mark.append(title);
        mark.addEventListener("click", () => section.showFrame(f.seq));
        root.append(mark);
        marks.set(f.seq, mark);
      }
      scroller.append(root);
      section.root = root;
    };
    const bySeq = new Map(frames.map((f) => [f.seq, f]));
    const order = frames.map((f) => f.seq);
    const step = (by) => {
      const at = order.indexOf(Number(view.dataset.seq || order[0]));
      section.showFrame(order[Math.min(order.length - 1, Math.max(0, at + by))]);
    };
    prev.addEventListener("click", () => step(-1));
    next.addEventListener("click", () => step(1));
    section.marks = marks;
    section.showFrame = (seq) => {
      const f = bySeq.get(seq);
      for (const m of root ? root.querySelectorAll(".f.current") : []) m.classList.remove("current");
      if (!f) { viewHead.textContent = "Frame #" + seq + " is not in this report (see --wire-log)."; pre.textContent = ""; return; }
      marks.get(seq).classList.add("current");
      const bits = ["#" + f.seq, f.dir === "out" ? words.out : words.in, f.channel, "lane " + f.lane, "at " + ms(f.t), f.size + " bytes"];
      if (f.http) bits.push(f.http);
      if (f.method) bits.push(f.method);
      if (f.purpose) bits.push(f.purpose + (f.poll ? " " + f.poll : ""));
      if (f.replyTo) bits.push("answers #" + f.replyTo);
      if (!f.utf8) bits.push("not UTF-8: bytes shown as \\xNN");
      if (f.flags) bits.push("flags: " + f.flags.join(", "));
      if (f.note) bits.push(f.note);
      viewHead.textContent = bits.join(" · ");
      pre.textContent = f.text + (f.cut ? "\n… (cut; the wire log has all " + f.size + " bytes)" : "");
      view.dataset.seq = String(seq);
    };
    return panel;
  }

  function section(run, index) {
    const node = el("section", "run");
    const state = { index: index, marks: new Map(), items: new Map(), root: null, showFrame: () => {}, draw: () => {},
      selected: null, setFilter: () => {} };
    state.select = (check, li) => {
      if (state.selected) state.selected.classList.remove("selected");
      state.selected = check ? li : null;
      if (li && check) {
        li.classList.add("selected");
        if (li.hidden) state.setFilter("all");  // a check the filter hides is shown with every other
      }
      if (!state.root) return;
      for (const m of state.root.querySelectorAll(".f.hl")) m.classList.remove("hl");
      state.root.classList.toggle("dim", Boolean(check && check.evidence.length));
      if (!check) return;
      let first = null;
      for (const seq of check.evidence) {
        const m = state.marks.get(seq);
        if (m) { m.classList.add("hl"); first = first || m; }
      }
      if (first && first.scrollIntoView) first.scrollIntoView({ block: "nearest", inline: "nearest" });
      if (check.evidence.length) state.showFrame(check.evidence[0]);
    };
    state.focus = (id) => {
      const item = state.items.get(id);
      if (!item) return;
      item.open(true);
      state.select(item.check, item.li);
      if (item.li.scrollIntoView) item.li.scrollIntoView({ block: "nearest" });
    };
    const lead = run.lead;
    if (run.label) node.append(el("h2", "", run.label));
    node.append(header(run));
    if (lead.length) node.append(leadBox(run, state));
    if (run.causes.length) node.append(causesBox(run, lead.length > 0));
    const layout = el("div", "layout");
    const tl = timelinePanel(run, state);
    layout.append(checksPanel(run, state), tl);
    node.append(layout);
    return [node, state];
  }

  const main = document.getElementById("report");
  const h1 = el("h1", "", data.title);
  main.append(h1);
  const states = data.runs.map((run, i) => { const [node, state] = section(run, i); main.append(node); return state; });
  for (const state of states) state.draw();
  // When the page was drawn, in ms from the navigation's start (docs/benchmarks.md quotes it).
  document.body.dataset.drawnMs = performance.now().toFixed(1);
  document.body.dataset.ready = "1";
})();
