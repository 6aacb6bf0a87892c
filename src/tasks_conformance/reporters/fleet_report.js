// The fleet page's own script (tasks_conformance/reporters/fleet_html.py embeds it, allowed by its hash).
// It reads the fleet from its JSON data elements and draws it with DOM calls and textContent only: no
// string from the data is ever parsed as markup. A target's section is drawn when opened, by the
// single-run page's own script (kept as text in #run-script, run as a new inline script allowed by its
// hash) over a data element that holds that one run.
"use strict";
(function () {
  const sectionsEl = document.getElementById("report-data");
  const sections = JSON.parse(sectionsEl.textContent).runs;
  sectionsEl.id = "fleet-sections";  // html_report.js reads #report-data: from now on, the one run it draws
  const fleet = JSON.parse(document.getElementById("fleet-data").textContent);
  const runScript = document.getElementById("run-script").textContent;
  const NAMES = { P: "passed", F: "failed", K: "known failure (baseline)", C: "could not run", N: "not applicable", "-": "not run" };
  const GLYPH = { P: "✓", F: "✗", K: "k", C: "!", N: "·", "-": "" };
  const OUTCOMES = ["passed", "failed", "incomplete", "interrupted"];
  const SHOWN_RULES = 12;
  const checks = [];
  for (const a of fleet.columns) for (const c of a.checks) checks.push({ id: c.id, title: c.title, rules: c.rules, area: a.area });
  const titles = new Map(checks.map((c) => [c.id, c.title]));
  const targets = fleet.targets;
  const byRule = new Map(fleet.ruleCounts.map((c) => [c.rule + " " + c.subject, new Set(c.runs)]));

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function badge(outcome) { return el("span", "outcome o-" + (OUTCOMES.includes(outcome) ? outcome : "other"), outcome); }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  const main = document.getElementById("fleet");
  main.append(el("h1", "", fleet.title));
  const head = el("p", "fleet-head");
  head.append(badge(fleet.outcome), document.createTextNode(" " + fleet.summary + " · exit code " + fleet.exitCode));
  main.append(head);
  if (fleet.history) {
    const h = fleet.history;
    main.append(el("p", "muted", "History: run " + h.run + (h.previous ? ", compared with " + plural(h.earlierRuns, "earlier run") +
      ", the last " + h.previous : ", the first run kept") + "; " + plural(h.regressions, "regression") + "."));
  }
  if (fleet.timelinesLeftOut) {
    main.append(el("p", "muted", plural(fleet.timelinesLeftOut, "target") + "' timelines are not embedded (the page stays small); " +
      "their frames are in each target's --wire-log."));
  }

  // -- filters ---------------------------------------------------------------------------------
  const filter = { outcomes: new Set(OUTCOMES), era: "", subject: "", rule: "", text: "", regressions: false };
  const bar = el("div", "fleet-filters");
  for (const o of OUTCOMES) {
    const n = targets.filter((t) => t.outcome === o).length;
    if (!n) continue;
    const label = el("label", "filter");
    const box = el("input");
    box.type = "checkbox"; box.checked = true; box.value = o;
    box.addEventListener("change", () => { if (box.checked) filter.outcomes.add(o); else filter.outcomes.delete(o); apply(); });
    label.append(box, document.createTextNode(" " + o + " (" + n + ")"));
    bar.append(label);
  }
  function select(name, values, key) {
    const s = el("select");
    s.setAttribute("aria-label", name);
    s.append(new Option("every " + name, ""));
    for (const [value, text] of values) s.append(new Option(text, value));
    s.addEventListener("change", () => { filter[key] = s.value; apply(); });
    bar.append(s);
    return s;
  }
  const count = (key, v) => targets.filter((t) => t[key] === v).length;
  const eras = [...new Set(targets.map((t) => t.era))].sort();
  select("era", eras.map((e) => [e, e + " (" + count("era", e) + ")"]), "era");
  const subjects = [...new Set(targets.map((t) => t.subject))].sort();
  select("subject", subjects.map((s) => [s, s + " (" + count("subject", s) + ")"]), "subject");
  const ruleSelect = select("rule", fleet.ruleCounts.map((c) => [c.rule + " " + c.subject, ruleText(c)]), "rule");
  const search = el("input", "search");
  search.type = "search"; search.placeholder = "target name contains…";
  search.addEventListener("input", () => { filter.text = search.value.toLowerCase(); apply(); });
  bar.append(search);
  if (fleet.history) {
    const label = el("label", "filter");
    const box = el("input");
    box.type = "checkbox";
    box.addEventListener("change", () => { filter.regressions = box.checked; apply(); });
    label.append(box, document.createTextNode(" regressions only"));
    bar.append(label);
  }
  const shown = el("span", "muted shown");
  bar.append(shown);
  main.append(bar);

  function ruleText(c) {
    return c.rule + ": " + c.failed + " of " + c.of + " " + c.subject + (c.of === 1 ? "" : "s") + (c.known ? " (" + c.known + " known)" : "");
  }

  // -- the rules the fleet breaks, the most broken first ------------------------------------------
  const rulesBox = el("div", "fleet-rules");
  rulesBox.append(el("h2", "", fleet.ruleCounts.length ? "Rules broken across the fleet" : "No rule broken across the fleet"));
  function ruleItem(c) {
    const li = el("li");
    const b = el("button", "rule-count", ruleText(c));
    b.type = "button";
    b.addEventListener("click", () => { ruleSelect.value = c.rule + " " + c.subject; filter.rule = ruleSelect.value; apply(); });
    const bar = el("span", "ratio");
    bar.style.setProperty("--r", String(c.failed / Math.max(c.of, 1)));
    li.append(bar, b);
    const rule = fleet.rules[c.rule];
    if (rule) li.append(el("span", "level", rule.level), el("span", "rule-text", rule.text));
    return li;
  }
  const top = el("ol", "rule-list");
  fleet.ruleCounts.slice(0, SHOWN_RULES).forEach((c) => top.append(ruleItem(c)));
  rulesBox.append(top);
  if (fleet.ruleCounts.length > SHOWN_RULES) {
    const more = el("details");
    more.append(el("summary", "", "every broken rule (" + fleet.ruleCounts.length + ")"));
    const rest = el("ol", "rule-list");
    rest.start = SHOWN_RULES + 1;
    fleet.ruleCounts.slice(SHOWN_RULES).forEach((c) => rest.append(ruleItem(c)));
    more.append(rest);
    rulesBox.append(more);
  }
  main.append(rulesBox);

  // -- the matrix: targets x checks, grouped by area ----------------------------------------------
  const scroll = el("div", "matrix-scroll");
  const table = el("table", "matrix");
  const colgroup = el("colgroup");
  colgroup.append(el("col", "c-target"), el("col", "c-outcome"));
  const cols = checks.map(() => { const col = el("col"); colgroup.append(col); return col; });
  table.append(colgroup);
  const thead = el("thead");
  const areaRow = el("tr", "areas"), checkRow = el("tr", "checks-row");
  areaRow.append(el("th", "corner", ""), el("th", "corner", ""));
  for (const a of fleet.columns) {
    const th = el("th", "area", a.title || a.area);
    th.colSpan = a.checks.length; th.title = (a.title || a.area) + " (area " + a.area + "): " + plural(a.checks.length, "check");
    areaRow.append(th);
  }
  checkRow.append(el("th", "row-head", "target (" + targets.length + ")"), el("th", "row-head", "outcome"));
  checks.forEach((c, i) => {
    const th = el("th", "ck");
    th.title = c.id + ": " + c.title + (c.rules.length ? " (" + c.rules.join(", ") + ")" : "");
    th.append(el("span", "", c.id.replace(/^tasks-/, "")));
    th.dataset.col = String(i);
    checkRow.append(th);
  });
  thead.append(areaRow, checkRow);
  table.append(thead);
  const tbody = el("tbody");
  const rows = targets.map((t, i) => {
    const tr = el("tr", "o-row-" + t.outcome);
    tr.dataset.row = String(i);
    const name = el("th", "target");
    const b = el("button", "target-name", t.label);
    b.type = "button"; b.title = t.label + " · " + t.summary;
    name.append(b);
    const out = el("td", "outcome-cell");
    out.append(badge(t.outcome));
    const h = t.history;
    if (h) {
      const dots = el("span", "dots");
      for (const r of h.recent) { const d = el("span", "dot d-" + (OUTCOMES.includes(r.outcome) ? r.outcome : "other")); d.title = r.run + ": " + r.outcome; dots.append(d); }
      out.append(dots);
      if (h.regressions.length) { const reg = el("span", "reg-count", "⬇" + h.regressions.length); reg.title = "regressions: " + h.regressions.join(", "); out.append(reg); }
    }
    tr.append(name, out);
    const regressed = new Set(h ? h.regressions : []);
    for (let c = 0; c < checks.length; c++) {
      const v = t.v[c] || "-";
      const td = el("td", "v v-" + (v === "-" ? "none" : v) + (regressed.has(checks[c].id) ? " reg" : ""), GLYPH[v] || "?");
      tr.append(td);
    }
    tbody.append(tr);
    return tr;
  });
  table.append(tbody);
  scroll.append(table);
  main.append(el("p", "muted legend-line", "✓ passed · ✗ failed · k known failure (baseline) · ! could not run · · not applicable · blank: not run" +
    (fleet.history ? " · outlined: a regression (passed last time, fails now); dots: the last outcomes, oldest first" : "") +
    ". Click a target or a cell to open its section."));
  main.append(scroll);

  function cellAt(target) {
    const td = target.closest("td.v, th.target, td.outcome-cell");
    if (!td) return null;
    const tr = td.parentElement;
    const row = Number(tr.dataset.row);
    const col = td.classList.contains("v") ? td.cellIndex - 2 : -1;
    return { row: row, col: col, td: td };
  }
  tbody.addEventListener("click", (e) => { const at = cellAt(e.target); if (at) open(at.row, at.col >= 0 ? checks[at.col].id : null); });
  tbody.addEventListener("mouseover", (e) => {
    const at = cellAt(e.target);
    if (!at || at.col < 0 || at.td.title) return;
    const t = targets[at.row], c = checks[at.col], v = t.v[at.col] || "-";
    let text = t.label + " · " + c.id + ": " + NAMES[v];
    const broken = t.broken[c.id];
    if (broken && broken.length) text += " (" + broken.join(", ") + ")";
    if (t.history && t.history.failingSince[c.id]) text += " · failing since " + t.history.failingSince[c.id];
    if (t.history && t.history.regressions.includes(c.id)) text += " · regression: passed in " + t.history.previous;
    at.td.title = text;
  });

  function matches(i) {
    const t = targets[i];
    if (!filter.outcomes.has(t.outcome) && OUTCOMES.includes(t.outcome)) return false;
    if (filter.era && t.era !== filter.era) return false;
    if (filter.subject && t.subject !== filter.subject) return false;
    if (filter.rule && !byRule.get(filter.rule).has(i)) return false;
    if (filter.regressions && !(t.history && t.history.regressions.length)) return false;
    return !filter.text || t.label.toLowerCase().includes(filter.text);
  }
  function apply() {
    let n = 0;
    rows.forEach((tr, i) => { const ok = matches(i); tr.hidden = !ok; n += ok ? 1 : 0; });
    shown.textContent = "showing " + n + " of " + plural(targets.length, "target");
    const rule = filter.rule.split(" ")[0];
    checks.forEach((c, i) => cols[i].classList.toggle("hl", Boolean(rule) && c.rules.includes(rule)));
  }

  // -- a target's section, drawn when opened ------------------------------------------------------
  const detail = el("section", "target-detail");
  detail.hidden = true;
  main.append(detail);
  let openRow = null;
  function full(i) {
    const s = JSON.parse(JSON.stringify(sections[i]));
    for (const a of s.areas) for (const c of a.checks) {
      c.title = titles.get(c.id) || c.title;
      for (const r of c.rules) { const rule = fleet.rules[r.id]; if (rule) { r.text = rule.text; r.url = rule.url; } }
    }
    return s;
  }
  function open(i, checkId) {
    if (openRow) openRow.classList.remove("open");
    openRow = rows[i]; openRow.classList.add("open");
    detail.replaceChildren();
    detail.hidden = false;
    const nav = el("div", "detail-bar");
    const close = el("button", "", "close ✕");
    close.type = "button";
    close.addEventListener("click", () => { detail.hidden = true; detail.replaceChildren(); openRow.classList.remove("open"); openRow.scrollIntoView({ block: "center" }); });
    const back = el("button", "", "▲ back to the matrix");
    back.type = "button";
    back.addEventListener("click", () => rows[i].scrollIntoView({ block: "center" }));
    nav.append(el("span", "muted", "target " + (i + 1) + " of " + targets.length + " "), back, close);
    const holder = el("div", "section-holder");
    holder.id = "report";
    detail.append(nav, holder);
    const data = document.createElement("script");
    data.type = "application/json"; data.id = "report-data";
    data.textContent = JSON.stringify({ title: "", runs: [full(i)] });
    document.body.append(data);
    const script = document.createElement("script");
    script.textContent = runScript;
    document.body.append(script);  // runs now, and draws the one run into #report
    data.remove(); script.remove(); holder.removeAttribute("id");
    detail.dataset.target = String(i);
    const li = checkId ? [...holder.querySelectorAll("li.check")].find((x) => x.dataset.checkId === checkId) : null;
    if (li) { li.querySelector(".check-head").click(); li.scrollIntoView({ block: "center" }); }
    else detail.scrollIntoView({ block: "start" });
  }

  apply();
  // When the page was drawn, in ms from the navigation's start (docs/benchmarks.md quotes it).
  document.body.dataset.drawnMs = performance.now().toFixed(1);
  document.body.dataset.ready = "1";
})();
