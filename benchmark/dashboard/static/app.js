// armbench dashboard: read-only pages over documents loaded as scripts (data/<key>.js, each
// calling armbench.put(key, doc)). Every string from a record, a team file or a tool is put
// into the page as text (textContent, never innerHTML). No arm is recommended.
"use strict";

const waiting = {};
window.armbench = {
  put(key, doc) {
    const done = waiting[key];
    if (done) { delete waiting[key]; done(doc); }
  },
};

function load(key) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    waiting[key] = (doc) => { script.remove(); resolve(doc); };
    script.onerror = () => { script.remove(); delete waiting[key]; reject(new Error(`no data for ${key}`)); };
    const fresh = location.protocol === "file:" ? "" : `?t=${Date.now()}`;
    script.src = `data/${key}.js${fresh}`;
    document.head.appendChild(script);
  });
}

function slug(name) {
  if (/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$/.test(name) && !name.startsWith("x")) return name;
  return "x" + Array.from(new TextEncoder().encode(name), (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---------------------------------------------------------------- building the page as text

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else if (v !== undefined && v !== null) node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function shown(value) {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(3).replace(/0+$/, "").replace(/\.$/, "");
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.map(shown).join(", ");
  if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${k}: ${shown(v)}`).join("; ");
  return String(value);
}
const pct = (x) => (x === null || x === undefined ? "-" : `${Math.round(100 * x)}%`);
const pts = (x) => { const v = 100 * x; const r = Math.round(v); return `${r === 0 && v !== 0 ? v.toFixed(1) : r}`; };
const signed = (x) => (x > 0 ? "+" : "") + pts(x);

// Column heads as the printed tables have them, not field names.
const WORDS = {
  pass_rate: "Pass rate", not_run: "Not run", not_verified: "Not verified", limited: "Stopped by a limit",
  median_tokens: "Median tokens", median_duration_ms: "Median duration (ms)", tokens_n: "Trials with tokens",
  duration_n: "Trials with a duration", model_source: "Model source",
};
function heading(key) {
  if (WORDS[key]) return WORDS[key];
  const words = String(key).replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// A time in the reader's local time to the minute; the exact instant on hover.
function when(iso) {
  if (!iso) return "-";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const text = d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  return el("time", { datetime: iso, title: iso }, text);
}

// A table from rows of objects: every key any row has is a column, so fields other changes add
// to the record or the table show without more code here. With `words`, field names are put
// in words (never for columns named by a team, such as arms).
function table(rows, columns, words) {
  if (!rows || !rows.length) return el("p", { class: "note" }, "None.");
  const cols = columns || [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return el("table", {},
    el("thead", {}, el("tr", {}, cols.map((c) => el("th", {}, words ? heading(c) : c)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, cols.map((c) =>
      el("td", { class: typeof r[c] === "number" ? "num" : null },
        r[c] instanceof Node ? r[c] : shown(r[c])))))));
}

const main = () => document.getElementById("main");
// replaceChildren with nested lists and gaps (null) left out.
function fill(node, ...kids) { node.replaceChildren(...kids.flat(Infinity).filter((n) => n !== null && n !== undefined)); }
function show(...nodes) { fill(main(), ...nodes); }
function problem(message) { show(el("p", { class: "warn" }, message)); }

// ---------------------------------------------------------------- Benchmarks page

async function benchmarksPage(suite) {
  const doc = await load("runs");
  const nav = document.getElementById("suites-nav");
  nav.replaceChildren(...doc.suites.map((s) => el("a", { href: `#/history/${slug(s)}` }, `History: ${s}`)));
  const filter = el("select", { id: "suite-filter", on: { change: (e) => {
    location.hash = e.target.value ? `#/suite/${slug(e.target.value)}` : "#/";
  } } }, el("option", { value: "" }, "every suite"),
  doc.suites.map((s) => el("option", { value: s, selected: s === suite ? "selected" : null }, s)));
  const rows = doc.runs.filter((r) => !suite || r.suite === suite).map((r) => ({
    Run: el("span", {}, el("a", { href: `#/run/${slug(r.run)}`, class: "run-link" }, r.run), subsetMark(r.subset)),
    Suite: r.suite, Started: when(r.started_at), "Team revision": (r.team_revision || "").slice(0, 12),
    Arms: r.arms, Outcome: r.state, Isolation: r.isolation,
    Record: r.source === "published" ? "published (reports branch)" : r.record || "not queued",
    Trials: `${r.reported}/${r.planned}${r.not_run ? ` (${r.not_run} not run)` : ""}`,
  }));
  show(el("h1", {}, "Benchmarks"),
    doc.published_problem ? el("p", { class: "warn" }, `The reports branch could not be read: ${doc.published_problem}`) : null,
    (doc.published_skipped || []).map((s) => el("p", { class: "warn skipped" }, `Skipped a published record that does not decode: ${s}`)),
    el("p", {}, el("label", { for: "suite-filter" }, "Suite"), filter),
    el("div", { id: "runs" }, table(rows)));
}

// ---------------------------------------------------------------- a run's page

let liveTimer = null;

async function runPage(runSlug, tab) {
  const doc = await load(`run/${runSlug}`);
  if (doc.missing) return problem("No such run in this ledger or on the reports branch.");
  const s = doc.summary;
  const live = s.state === "running";
  const tabs = el("div", { class: "tabs" },
    el("a", { href: `#/run/${runSlug}`, class: tab === "results" ? "on" : null, id: "tab-results" }, "Results"),
    el("a", { href: `#/run/${runSlug}/compare`, class: tab === "compare" ? "on" : null, id: "tab-compare" }, "Compare"));
  const head = [
    el("h1", {}, `Run ${s.run}`),
    el("p", {}, `Suite ${s.suite || "-"}, started `, when(s.started_at), `, team revision ${(s.team_revision || "-").slice(0, 12)}, `,
      `outcome ${s.state}, isolation ${s.isolation || "-"}, record ${s.source === "published" ? "published (reports branch)" : s.record || "not queued"}. `,
      s.subset ? el("span", { class: "subset", id: "subset" }, `A subset of the suite: ${s.subset}. `) : null,
      live ? el("span", { class: "live", id: "live" }, `In progress: ${s.reported} of ${s.planned} trials reported; this page updates itself.`) : null),
    tabs,
  ];
  const body = tab === "compare" ? comparePart(doc, runSlug) : resultsPart(doc, runSlug);
  show(...head, ...body);
  clearTimeout(liveTimer);
  if (live) liveTimer = setTimeout(() => { if (location.hash.startsWith(`#/run/${runSlug}`)) route(); }, 2000);
}

function armRows(doc) {
  const arms = doc.record.arms || [];
  const entry = Object.fromEntries(arms.map((a) => [a.name, a]));
  if (doc.table) {
    return doc.table.arms.map((row) => {
      const extra = Object.fromEntries(Object.entries(entry[row.arm] || {})
        .filter(([k]) => !(k in row) && !["name", "tool", "model", "effort", "source"].includes(k)));
      return { ...row, ...extra, pass_rate: pct(row.pass_rate) };
    });
  }
  // A published record alone: counted from its trials.
  return arms.map((a) => {
    const mine = (doc.record.trials || []).filter((t) => t.arm === a.name);
    const count = (r) => mine.filter((t) => t.result === r).length;
    const { name, ...rest } = a;
    return { arm: name, ...rest, planned: mine.length, passed: count("passed"), failed: count("failed"),
      error: count("error"), unscored: count("unscored"), not_run: count("not_run"),
      pass_rate: mine.length ? pct(count("passed") / mine.length) : "-" };
  });
}

function resultsPart(doc, runSlug) {
  const rec = doc.record;
  const arms = (rec.arms || []).map((a) => a.name);
  const tasks = (rec.tasks || []).map((t) => t.id);
  const byCell = {};
  (rec.trials || []).forEach((t, i) => { (byCell[`${t.task}\u0000${t.arm}`] ||= []).push([t, i]); });
  const invalid = new Set((rec.baselines || []).filter((b) => b.status === "invalid").map((b) => b.task));
  const explanation = el("div", { id: "explanation", hidden: "hidden" });
  const pick = (button, key, entry) => async () => {
    document.querySelectorAll(".trial.chosen").forEach((b) => b.classList.remove("chosen"));
    button.classList.add("chosen");
    explanation.removeAttribute("hidden");
    explanation.replaceChildren(el("p", { class: "note" }, "Loading the explanation…"));
    let got = null;
    if (doc.explained) {
      try { got = await load(`explain/${runSlug}/${key}`); } catch (e) { got = null; }
    }
    fill(explanation,
      entry ? el("h3", {}, `r${entry.repetition}.${entry.task}.${entry.arm}: ${entry.result}`) : null,
      got && !got.missing ? [
        el("p", { class: "why" }, el("strong", {}, `${got.subject}: ${got.result}. `), got.rule),
        entry && key.startsWith("t") ? el("p", {}, el("a", { href: `#/run/${runSlug}/trial/${key.slice(1)}`, class: "open-trial" },
          "Open the trial: its check's output, its diff and its transcript")) : null,
        el("pre", { class: "events" }, got.events.join("\n")),
      ] : el("p", { class: "note" }, "This run is known from its published record only: its log, and so its explanation, is on the machine that ran it."),
      entry ? [el("h3", {}, "The trial in the record"), table(Object.entries(entry).map(([k, v]) => ({ field: k, value: v })))] : null);
  };
  const matrix = el("table", { id: "matrix" },
    el("thead", {}, el("tr", {}, el("th", {}, "Task"), arms.map((a) => el("th", {}, a)))),
    el("tbody", {}, tasks.map((task) => el("tr", {}, el("th", {}, task), arms.map((arm) =>
      el("td", {}, invalid.has(task) ? el("div", { class: "invalid" }, "not run: task invalid") : null,
        (byCell[`${task}\u0000${arm}`] || []).map(([t, i]) => {
        const b = el("button", { class: `trial ${t.result}`, type: "button", title: `repetition ${t.repetition}: ${t.result.replace("_", " ")}` },
          `r${t.repetition} ${t.result.replace("_", " ")}`);
        b.addEventListener("click", pick(b, `t${i}`, t));
        return b;
      })))))));
  const baselines = (rec.baselines || []).map((b, i) => {
    const button = el("button", { class: `trial ${b.status === "valid" ? "passed" : "failed"}`, type: "button" }, "why");
    button.addEventListener("click", pick(button, `b${i}`, null));
    return { ...b, explain: button };
  });
  const usage = doc.table ? doc.table.usage : null;
  const known = new Set(["schema", "run", "workflow", "outcome", "startedAt", "isolated", "isolation", "chain",
    "suite", "repetitions", "subset", "baselineTeamRevision", "aliases", "tasks", "baselines", "arms", "trials", "scorers"]);
  const other = Object.entries(rec).filter(([k]) => !known.has(k));
  return [
    el("h2", {}, "Arms"), el("div", { id: "arms" }, table(armRows(doc), null, true)),
    el("h2", {}, "Usage"),
    usage ? table(usage.map((u) => ({ ...u, cost: u.cost === null || u.cost === undefined ? "not stated" : u.cost })), null, true)
      : el("p", { class: "note" }, "Each trial's usage is in its record entry (click a trial)."),
    el("h2", {}, "Tasks by arm"),
    el("p", { class: "note" }, "Each trial's result; click one for why it got it (as armbench explain gives it)."),
    matrix, explanation,
    el("h2", {}, "Baselines"), table(baselines, null, true),
    el("h2", {}, "Scorers"), table((rec.scorers || []).map((s) => (typeof s === "object" ? s : { scorer: s }))),
    other.length ? [el("h2", {}, "Also in the record"), table(other.map(([k, v]) => ({ field: k, value: v })))] : null,
    doc.table ? el("p", { class: "note" }, doc.table.caption) : null,
  ];
}

// ---------------------------------------------------------------- Compare tab

function forest(rows, id) {
  // rows: [{label, d}] where d has estimate, lower, upper (a difference of pass rates).
  const width = 720, left = 260, right = 30, rowH = 30, top = 28;
  const height = top + rows.length * rowH + 30;
  const x = (v) => left + ((v + 1) / 2) * (width - left - right);
  const plot = svg("svg", { class: "forest", id, width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
  plot.appendChild(svg("title", {}, "Each pair's difference with its 95% interval; the dashed line is no difference."));
  for (const t of [-1, -0.5, 0, 0.5, 1]) {
    plot.appendChild(svg("line", { class: "axis", x1: x(t), x2: x(t), y1: top - 6, y2: height - 24, opacity: 0.25 }));
    plot.appendChild(svg("text", { x: x(t), y: height - 8, "text-anchor": "middle" }, `${signed(t)}`));
  }
  plot.appendChild(svg("line", { class: "zero", x1: x(0), x2: x(0), y1: top - 10, y2: height - 24 }));
  plot.appendChild(svg("text", { x: x(0), y: 14, "text-anchor": "middle" }, "0 (no difference)"));
  rows.forEach((r, i) => {
    const y = top + i * rowH + rowH / 2;
    plot.appendChild(svg("text", { x: 8, y: y + 4 }, r.label));
    if (r.d.type === "no_data" || r.d.lower === undefined) {
      plot.appendChild(svg("text", { x: x(0) + 8, y: y + 4 }, "no paired trials"));
      return;
    }
    plot.appendChild(svg("rect", { class: "interval", x: x(r.d.lower), y: y - 6, width: Math.max(1, x(r.d.upper) - x(r.d.lower)), height: 12 }));
    plot.appendChild(svg("circle", { class: "estimate", cx: x(r.d.estimate), cy: y, r: 5 }));
  });
  return plot;
}

function differenceText(d) {
  if (!d || d.type === "no_data" || d.lower === undefined) return `no difference can be given: ${d && d.reason ? d.reason : "no paired trials"}`;
  return `${signed(d.estimate)} points, 95% interval ${signed(d.lower)} to ${signed(d.upper)} points`;
}

function pairBlock(p, i) {
  const d = p.difference;
  const usageCols = (arm) => Object.fromEntries(Object.entries(arm).filter(([k]) => !["arm", "passed", "pass_rate"].includes(k)));
  return el("section", { class: "pair", id: `pair-${i}` },
    el("h3", {}, `${p.key}: ${p.from.arm} → ${p.to.arm}`),
    el("p", { class: "difference" }, `${p.to.arm} minus ${p.from.arm} over ${p.trials} paired trials: ${differenceText(d)}.`),
    d && d.note ? el("p", { class: "warn small-sample" }, d.note) : null,
    d && d.small_sample && !d.note ? el("p", { class: "warn small-sample" }, "Few effective pairs: read the interval, not the estimate.") : null,
    table([p.from, p.to].map((a) => ({ arm: a.arm, passed: a.passed, pass_rate: pct(a.pass_rate), ...usageCols(a) }))),
    table(p.tasks.map((t) => ({ task: t.task, trials: t.trials, [p.from.arm]: pct(t.from_pass_rate), [p.to.arm]: pct(t.to_pass_rate) }))),
    d && d.type !== "no_data" ? table([{ "both passed": d.both_passed, [`only ${p.from.arm}`]: d.from_only_passed,
      [`only ${p.to.arm}`]: d.to_only_passed, "neither": d.neither_passed, "design effect": d.deff,
      "effective pairs": d.effective_pairs, "McNemar p (descriptive)": d.mcnemar_p }]) : null);
}

function comparePart(doc, runSlug) {
  const pairs = doc.pairs || [];
  const other = el("div", { id: "two-runs" });
  const select = el("select", { id: "other-run" }, el("option", { value: "" }, "another run of this suite…"),
    (doc.others || []).map((r) => el("option", { value: r }, r)));
  select.addEventListener("change", async () => {
    if (!select.value) return other.replaceChildren();
    other.replaceChildren(el("p", { class: "note" }, "Loading…"));
    let got;
    try { got = await load(`compare/${runSlug}/${slug(select.value)}`); } catch (e) { got = { missing: true }; }
    if (got.missing) return other.replaceChildren(el("p", { class: "warn" }, "That comparison is not in this export."));
    fill(other,
      el("p", {}, `Each arm in both runs, measured from run ${got.from} to run ${got.to}.`),
      forest(got.pairs.map((p) => ({ label: p.arm, d: p.difference })), "forest-runs"),
      table(got.pairs.map((p) => ({ arm: p.arm, "paired trials": p.trials, [`passed in ${got.from}`]: p.from_passed,
        [`passed in ${got.to}`]: p.to_passed, difference: differenceText(p.difference), note: p.difference.note || null }))));
  });
  return [
    el("h2", {}, "Pairs of this run"),
    el("p", { class: "note" }, "Two arms pair when they differ in exactly one of team, tool, model and workflow; trials pair on task and repetition. No arm is recommended."),
    pairs.length ? forest(pairs.map((p) => ({ label: `${p.key}: ${p.from.arm} → ${p.to.arm}`, d: p.difference })), "forest") :
      el("p", { class: "note", id: "no-pairs" }, "No two arms of this run differ in exactly one key."),
    pairs.map(pairBlock),
    el("h2", {}, "Against another run of this suite"),
    (doc.others || []).length ? select : el("p", { class: "note" }, "No other run of this suite."),
    other,
  ];
}

// ---------------------------------------------------------------- History

async function historyPage(suiteSlug) {
  const doc = await load(`history/${suiteSlug}`);
  if (doc.missing) return problem("No such suite.");
  const arms = [...new Set(doc.runs.flatMap((r) => r.arms.map((a) => a.arm)))];
  const rows = doc.runs.map((r) => {
    const row = { Run: el("span", {}, el("a", { href: `#/run/${slug(r.run)}` }, r.run), subsetMark(r.subset)), Started: when(r.started_at), Outcome: r.outcome };
    for (const arm of arms) {
      const p = r.arms.find((a) => a.arm === arm);
      row[arm] = !p ? "-" : el("span", { class: p.flagged ? "flagged" : null },
        p.pass_rate === null ? "-" : `${pct(p.pass_rate)} (${p.passed}/${p.planned}), ${pct(p.lower)} to ${pct(p.upper)}${p.flagged ? " — dropped (gate)" : ""}`);
    }
    row["compared with"] = r.against;
    return row;
  });
  show(el("h1", {}, `History of suite ${doc.suite}`),
    el("p", { class: "note" }, "Each arm's pass rate in each run with its 95% Wilson interval; the regression gate's flags are against the newest comparable run before it."),
    historyPlot(doc.runs, arms), table(rows));
}

// A subset run (--task, --arm, --repetitions) is marked wherever runs are listed.
function subsetMark(subset) {
  return subset ? el("span", { class: "subset", title: subset }, ` subset: ${subset}`) : null;
}

function historyPlot(runs, arms) {
  const width = 720, left = 50, rowH = 150, top = 20;
  const height = top + arms.length * (rowH + 20) + 10;
  const plot = svg("svg", { class: "history", id: "history-plot", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
  arms.forEach((arm, k) => {
    const y0 = top + k * (rowH + 20);
    const y = (v) => y0 + rowH - v * rowH;
    const x = (i) => left + 20 + (runs.length > 1 ? (i / (runs.length - 1)) * (width - left - 60) : 0);
    plot.appendChild(svg("text", { x: 4, y: y0 + 12 }, arm));
    for (const t of [0, 0.5, 1]) {
      plot.appendChild(svg("line", { class: "axis", x1: left, x2: width - 10, y1: y(t), y2: y(t), opacity: 0.25 }));
      plot.appendChild(svg("text", { x: left - 6, y: y(t) + 4, "text-anchor": "end" }, pct(t)));
    }
    runs.forEach((r, i) => {
      const p = r.arms.find((a) => a.arm === arm);
      if (!p || p.pass_rate === null) return;
      plot.appendChild(svg("rect", { class: "interval", x: x(i) - 4, y: y(p.upper), width: 8, height: Math.max(1, y(p.lower) - y(p.upper)) }));
      plot.appendChild(svg("circle", { class: p.flagged ? "flag" : "estimate", cx: x(i), cy: y(p.pass_rate), r: 4 }));
    });
  });
  return plot;
}

// ---------------------------------------------------------------- a trial's page

function diffPart(files) {
  return el("div", { id: "diff" }, files.map((f) => el("details", { open: "open", class: "file" },
    el("summary", {}, el("code", {}, f.path), ` +${f.added} −${f.removed}`),
    el("pre", { class: "diff" }, f.lines.map((line) => {
      const kind = line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ") ? "head"
        : line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
      return el("span", { class: kind }, line);
    })))));
}

function transcriptPart(turns) {
  return el("div", { id: "transcript" }, turns.map((t) => el("div", { class: `turn ${t.who.replace(" ", "-")}` },
    el("div", { class: "who" }, t.name ? `${t.who}: ${t.name}` : t.who), el("pre", {}, t.text))));
}

function piecePart(title, piece, id, body) {
  if (!piece) return null;
  return [el("h2", {}, title),
    piece.cut ? el("p", { class: "note" }, `Cut: ${piece.cut}`) : null,
    piece.redacted ? el("p", { class: "note" }, `${piece.redacted} withheld value(s) shown as [withheld NAME].`) : null,
    piece.missing ? el("p", { class: "note" }, "Kept, but not on this machine.") : body(piece.value, id)];
}

async function trialPage(runSlug, index) {
  const [got, doc] = await Promise.all([load(`explain/${runSlug}/t${index}`), load(`trial/${runSlug}/t${index}`)]);
  if (got.missing) return problem("No such trial in this checkout's ledger.");
  const pieces = (doc && !doc.missing && doc.pieces) || {};
  const pre = (value, id) => el("pre", { class: "output", id }, value);
  const judged = Object.entries(pieces).filter(([k]) => k.startsWith("judge_"));
  show(
    el("p", {}, el("a", { href: `#/run/${runSlug}` }, "← the run")),
    el("h1", {}, `${got.subject}: ${got.result}`),
    el("p", { class: "why", id: "rule" }, got.rule),
    doc && doc.note ? el("p", { class: "note", id: "evidence-note" }, doc.note) : null,
    piecePart("Setup's output", pieces.setup, "setup-output", pre),
    piecePart("The check's output", pieces.check, "check-output", pre),
    piecePart("Diff from the starting commit", pieces.diff, "diff", (files) => diffPart(files)),
    piecePart("Transcript", pieces.transcript, "transcript", (turns) => transcriptPart(turns)),
    judged.length ? [el("h2", {}, "Judges"), judged.map(([k, p]) => [el("h3", {}, k.replace("_", " ").replace(":", ": ")), pre(p.value)])] : null,
    el("h2", {}, "Events"), el("pre", { class: "events" }, got.events.join("\n")),
  );
}

// ---------------------------------------------------------------- routing

async function route() {
  const parts = (location.hash.replace(/^#\/?/, "") || "").split("/");
  try {
    if (parts[0] === "run" && parts[1] && parts[2] === "trial" && /^\d+$/.test(parts[3] || "")) await trialPage(parts[1], Number(parts[3]));
    else if (parts[0] === "run" && parts[1]) await runPage(parts[1], parts[2] === "compare" ? "compare" : "results");
    else if (parts[0] === "history" && parts[1]) await historyPage(parts[1]);
    else if (parts[0] === "suite" && parts[1]) {
      const doc = await load("runs");
      await benchmarksPage(doc.suites.find((s) => slug(s) === parts[1]));
    } else await benchmarksPage(null);
  } catch (e) {
    problem(`This page could not be loaded: ${e.message}`);
  }
}

window.addEventListener("hashchange", route);
route();
