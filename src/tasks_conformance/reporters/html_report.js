// The HTML report's own script (tasks_conformance/reporters/html.py embeds it, allowed by its hash).
// It reads the run from the JSON data element and draws it with DOM calls and textContent only:
// no string from the data is ever parsed as markup.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const LANE_H = 22, LABEL_W = 170, AXIS_H = 20, MIN_PLOT_W = 360, MAX_PLOT_W = 24000, RIGHT_PAD = 90, BREAK_W = 28;
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
  // A tick's time, as precise as the step between ticks needs.
  function tick(v, step) { return v >= 1000 ? (v / 1000).toFixed(step < 10 ? 3 : 2) + " s" : (step < 1 ? v.toFixed(2) : Math.round(v)) + " ms"; }
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

  // The time axis: linear where the frames are, and each break (a long pause with no frame, as the
  // report's data names them) drawn BREAK_W wide, so frames never bunch beside one long wait.
  // x(t) and its inverse are piecewise linear through the knots.
  function axis(t0, tEnd, breaks, x0, width) {
    const paused = breaks.reduce((sum, b) => sum + (b.to - b.from), 0), active = tEnd - t0 - paused;
    const gapW = !breaks.length ? 0 : active > 0 ? Math.min(BREAK_W, width / (3 * breaks.length)) : width / breaks.length;
    const k = active > 0 ? (width - gapW * breaks.length) / active : (breaks.length ? 0 : width);  // px per ms
    const knots = [[t0, x0]];
    let px = x0, prev = t0;
    for (const b of breaks) {
      px += (b.from - prev) * k; knots.push([b.from, px]);
      px += gapW; knots.push([b.to, px]); prev = b.to;
    }
    knots.push([tEnd, px + (tEnd - prev) * k]);
    const slope = (a) => (a === 0 ? k : 1 / (k || 1));
    function through(v, a, b) {  // a: the coordinate given (0 time, 1 x), b: the one returned
      if (v <= knots[0][a]) return knots[0][b] + (v - knots[0][a]) * slope(a);
      for (let i = 1; i < knots.length; i++) {
        const p = knots[i - 1], q = knots[i];
        if (v <= q[a]) return q[a] > p[a] ? p[b] + ((v - p[a]) * (q[b] - p[b])) / (q[a] - p[a]) : q[b];
      }
      const last = knots[knots.length - 1];
      return last[b] + (v - last[a]) * slope(a);
    }
    const gaps = breaks.map((b, i) => ({ from: b.from, to: b.to, x1: knots[2 * i + 1][1], x2: knots[2 * i + 2][1] }));
    return { x: (tv) => through(tv, 0, 1), time: (xv) => through(xv, 1, 0), gaps: gaps };
  }

  function timelinePanel(run, section) {
    const t = run.timeline, panel = el("div", "timeline");
    const frames = t.frames, words = directions(run), breaks = t.breaks || [];
    panel.append(el("h3", "", "Exchange: " + frames.length + " frames, " + t.lanes.length + " lanes" +
      (t.omitted ? " (" + t.omitted + " not shown: see --wire-log)" : "")));
    if (!frames.length) { panel.append(el("p", "muted", "No frames were recorded.")); return panel; }
    const legend = el("div", "legend");
    legend.append(el("span", "lg out", words.out), el("span", "lg in", words.in), el("span", "lg poll", "poll"),
      el("span", "lg interval", "poll interval (tick: the pollInterval the server asked)"), el("span", "lg hl", "evidence of the selected check"));
    if (breaks.length) legend.append(el("span", "lg gap", "a pause with no frame, drawn narrow"));
    panel.append(legend);
    const zoom = el("button", "zoom", "");
    zoom.type = "button";
    const tools = el("div", "tl-tools");
    tools.append(zoom);
    panel.append(tools);
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
    const marks = section.marks;
    const bySeq = new Map(frames.map((f) => [f.seq, f]));
    const whole = { from: frames[0].t, to: Math.max(t.duration, frames[0].t) };
    let root = null;
    // Drawn once the page is laid out, to the width the panel has (wider, and scrolled, when many
    // frames): the whole exchange, or (zoomed) the time around the selected check's frames.
    section.draw = (range) => {
      const win = range || whole, t0 = win.from, tEnd = win.to;
      const inside = (tv) => !range || (tv >= t0 && tv <= tEnd);
      const shown = frames.filter((f) => inside(f.t));
      // 4 px a frame on the busiest lane (marks on different lanes never overlap), or the room there is.
      const perLane = new Map();
      for (const f of shown) perLane.set(f.lane, (perLane.get(f.lane) || 0) + 1);
      const busiest = Math.max(0, ...perLane.values());
      const room = scroller.clientWidth - LABEL_W - RIGHT_PAD - 10;
      const plotW = Math.min(MAX_PLOT_W, Math.max(MIN_PLOT_W, room, busiest * 4));
      const X0 = LABEL_W + 6, ax = axis(t0, tEnd, breaks.filter((b) => b.from >= t0 && b.to <= tEnd && b.to > b.from), X0, plotW);
      const x = (tms) => Math.min(X0 + plotW + RIGHT_PAD - 4, Math.max(X0 - 4, ax.x(tms)));
      const laneIndex = new Map(t.lanes.map((l, i) => [l, i]));
      const y = (lane) => AXIS_H + laneIndex.get(lane) * LANE_H;
      const width = LABEL_W + plotW + RIGHT_PAD, height = AXIS_H + t.lanes.length * LANE_H + 4;
      root = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img" }, "tl");
      root.append(svg("title", {}), svg("desc", {}));
      root.firstChild.textContent = "The exchange: one lane per " + (run.header.subject === "client" ? "scenario" : "probe");
      // Ticks evenly along the plot, each labelled with its time (none on a break: its own label says it).
      const n = Math.max(2, Math.round(plotW / 110)), ticks = [];
      for (let i = 0; i <= n; i++) {
        const gx = X0 + (plotW * i) / n;
        if (!ax.gaps.some((g) => gx > g.x1 - 26 && gx < g.x2 + 26)) ticks.push([gx, ax.time(gx)]);
      }
      const step = ticks.slice(1).reduce((m, tk, i) => Math.min(m, tk[1] - ticks[i][1]), Infinity);
      for (const [gx, tv] of ticks) {
        root.append(svg("line", { x1: gx, x2: gx, y1: AXIS_H - 4, y2: height }, "grid"));
        const label = svg("text", { x: gx, y: AXIS_H - 7 }, "tick");
        label.textContent = tick(tv, step);
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
      for (const g of ax.gaps) {
        const gap = svg("rect", { x: g.x1, y: AXIS_H - 4, width: Math.max(g.x2 - g.x1, 1), height: height - AXIS_H + 4 }, "gap");
        const title = svg("title", {});
        title.textContent = "no frame for " + ms(g.to - g.from) + " (" + ms(g.from) + " to " + ms(g.to) + "): drawn narrow";
        gap.append(title);
        const label = svg("text", { x: (g.x1 + g.x2) / 2, y: AXIS_H - 7 }, "tick gap-label");
        label.textContent = "+" + ms(g.to - g.from);
        root.append(gap, label);
      }
      for (const p of t.polls) {
        if (p.sinceMs === null || !inside(p.t)) continue;
        const ly = y(p.lane) + LANE_H - 4, x2 = x(p.t), x1 = x(Math.max(p.t - p.sinceMs, t0));
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
        if (!inside(s.t)) continue;
        const sx = x(s.t) + 3, crowded = (labelEnd.get(s.lane) || 0) > sx;
        if (!crowded) labelEnd.set(s.lane, sx + s.status.length * 5.5 + 4);
        const st = svg(crowded ? "circle" : "text", crowded ? { cx: sx - 3, cy: y(s.lane) + 4, r: 2 } : { x: sx, y: y(s.lane) + 8 }, "status-label st-" + (STATUSES.includes(s.status) ? s.status : "other"));
        if (!crowded) st.textContent = s.status;
        const title = svg("title", {}); title.textContent = "task " + s.taskId + ": " + s.status + " (frame #" + s.seq + ")";
        st.append(title);
        root.append(st);
      }
      marks.clear();
      for (const f of shown) {
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
      scroller.replaceChildren(root);
      section.root = root;
      const current = marks.get(Number(view.dataset.seq));
      if (current) current.classList.add("current");
    };
    // The time around a check's frames (a quarter of their spread each side, at least 10 ms).
    const around = (check) => {
      const ts = check ? check.evidence.filter((s) => bySeq.has(s)).map((s) => bySeq.get(s).t) : [];
      if (!ts.length) return null;
      const lo = ts.reduce((a, b) => Math.min(a, b)), hi = ts.reduce((a, b) => Math.max(a, b));
      const pad = Math.max((hi - lo) / 4, 10);
      return { from: lo - pad, to: hi + pad };
    };
    section.updateZoom = () => {
      zoom.disabled = !section.window && !around(section.selectedCheck);
      zoom.textContent = section.window ? "show the whole exchange" : "zoom to the selected check's frames";
    };
    // Zoomed, selecting another check zooms to its frames (or, it has none, back out).
    section.rezoom = () => { if (section.window) { section.window = around(section.selectedCheck); section.draw(section.window); } };
    zoom.addEventListener("click", () => {
      section.window = section.window ? null : around(section.selectedCheck);
      section.draw(section.window);
      section.highlight();
      section.updateZoom();
    });
    section.updateZoom();
    const order = frames.map((f) => f.seq);
    const step = (by) => {
      const at = order.indexOf(Number(view.dataset.seq || order[0]));
      section.showFrame(order[Math.min(order.length - 1, Math.max(0, at + by))]);
    };
    prev.addEventListener("click", () => step(-1));
    next.addEventListener("click", () => step(1));
    section.showFrame = (seq) => {
      const f = bySeq.get(seq);
      for (const m of root ? root.querySelectorAll(".f.current") : []) m.classList.remove("current");
      if (!f) { viewHead.textContent = "Frame #" + seq + " is not in this report (see --wire-log)."; pre.textContent = ""; return; }
      const mark = marks.get(seq);
      if (mark) mark.classList.add("current");
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

  // What the client did in each scenario (a client run): open when one did not end cleanly, as the
  // run's verdict may rest on it (a timeout, a non-zero exit, a client that never started).
  function clientBox(run) {
    const rows = run.scenarios || [];
    const odd = rows.filter((r) => !r.ok);
    const box = el("details", "client-record");
    box.open = odd.length > 0;
    box.append(el("summary", "", "What the client did: " + plural(rows.length, "scenario", "scenarios") +
      (odd.length ? ", " + odd.length + " did not end cleanly" : ", each exited 0")));
    const ol = el("ol");
    for (const r of rows) {
      const li = el("li", r.ok ? "" : "odd");
      const head = el("div", "scenario-head");
      head.append(el("span", "scenario-id", r.scenario), el("span", "muted", " " + r.era + ", " + r.transport + ": "),
        el("span", "scenario-status", r.status), el("span", "muted", " after " + ms(r.durationMs) + " of " +
        ms(r.timeoutMs) + ", " + plural(r.messages, "message", "messages") + " over " +
        plural(r.connections, "connection", "connections")));
      li.append(head);
      if (r.problem) li.append(el("p", "cause", r.problem));
      if (r.lines.length) li.append(el("pre", "scenario-lines", r.lines.join("\n")));
      ol.append(li);
    }
    box.append(ol);
    return box;
  }

  function section(run, index) {
    const node = el("section", "run");
    const state = { index: index, marks: new Map(), items: new Map(), root: null, selected: null, selectedCheck: null,
      window: null, showFrame: () => {}, draw: () => {}, setFilter: () => {}, updateZoom: () => {}, rezoom: () => {} };
    // Lights the selected check's frames (and dims the rest); returns the first lit mark.
    state.highlight = () => {
      if (!state.root) return null;
      for (const m of state.root.querySelectorAll(".f.hl")) m.classList.remove("hl");
      const check = state.selectedCheck;
      state.root.classList.toggle("dim", Boolean(check && check.evidence.length));
      let first = null;
      for (const seq of check ? check.evidence : []) {
        const m = state.marks.get(seq);
        if (m) { m.classList.add("hl"); first = first || m; }
      }
      return first;
    };
    state.select = (check, li) => {
      if (state.selected) state.selected.classList.remove("selected");
      state.selected = check ? li : null;
      state.selectedCheck = check;
      if (li && check) {
        li.classList.add("selected");
        if (li.hidden) state.setFilter("all");  // a check the filter hides is shown with every other
      }
      state.rezoom();
      const first = state.highlight();
      state.updateZoom();
      if (first && first.scrollIntoView) first.scrollIntoView({ block: "nearest", inline: "nearest" });
      if (check && check.evidence.length) state.showFrame(check.evidence[0]);
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
    if (run.scenarios && run.scenarios.length) node.append(clientBox(run));
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
