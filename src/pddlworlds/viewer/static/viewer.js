// pddlworlds run viewer: lays out the data computed by pddlworlds.viewer (no network, no libraries).
// Routes: #run (the run page), #ep/ID (an episode), #cmp/A/B (two episodes side by side).
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("run-data").textContent);
  const EPISODES = DATA.episodes;
  const details = new Map();
  const app = document.getElementById("app");
  const where = document.getElementById("where");
  const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#a16207", "#db2777"];
  const tableState = { key: "id", dir: 1, filters: {} };

  function esc(value) {
    return String(value === null || value === undefined ? "" : value)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }
  function num(x, digits) { return x === null || x === undefined ? "–" : Number(x).toFixed(digits); }
  function yesNo(b) { return b ? '<span class="yes">yes</span>' : '<span class="no">no</span>'; }
  function detail(id) {
    if (!details.has(id)) {
      const node = document.getElementById("ep-" + id);
      const d = node ? JSON.parse(node.textContent) : null;
      if (d) {  // memory views stored as (shared prefix of the previous step's, new tail): see page.py
        let previous = null;
        for (const s of d.steps) {
          if (s.memory_delta) s.memory_view = (previous || "").slice(0, s.memory_delta[0]) + s.memory_delta[1];
          previous = typeof s.memory_view === "string" ? s.memory_view : null;
        }
      }
      details.set(id, d);
    }
    return details.get(id);
  }
  function labels() { return Array.from(new Set(EPISODES.map(e => e.label))); }
  function colorIndex(label) { return Math.max(0, labels().indexOf(label)) % COLORS.length; }
  function colorOf(label) { return COLORS[colorIndex(label)]; }

  // ---- small SVG line chart ------------------------------------------------------------------
  function lineChart(series, opts) {
    const w = opts.width || 300, h = opts.height || 160, pad = opts.pad === undefined ? 28 : opts.pad;
    const maxX = opts.maxX || Math.max(1, ...series.map(s => s.values.length - 1));
    const x = k => pad + (w - pad - 8) * k / maxX;
    const top = opts.title ? 18 : 4;
    const bottom = pad ? h - pad + 4 : h - 2;
    const y = v => bottom - (bottom - top) * (Number.isFinite(Number(v)) ? Number(v) : 0);  // stored values may be anything
    let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" class="chart">`;
    if (opts.title) out += `<text x="${w / 2 + pad / 2}" y="12" text-anchor="middle" font-size="12" font-weight="600">${esc(opts.title)}</text>`;
    if (pad) {
      out += `<line x1="${pad}" y1="${y(0)}" x2="${w - 8}" y2="${y(0)}" stroke="#999"/><line x1="${pad}" y1="${y(0)}" x2="${pad}" y2="${y(1)}" stroke="#999"/>`;
      out += `<text x="${pad - 4}" y="${y(1) + 4}" text-anchor="end" font-size="10">1</text><text x="${pad - 4}" y="${y(0) + 4}" text-anchor="end" font-size="10">0</text>`;
      out += `<text x="${w - 8}" y="${h - 4}" text-anchor="end" font-size="10">step ${maxX}</text>`;
    }
    for (const s of series) {
      const pts = s.values.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
      out += `<polyline fill="none" stroke="${s.color}" stroke-width="${opts.stroke || 1.6}" points="${pts}"><title>${esc(s.name || "")}</title></polyline>`;
      if (opts.mark !== undefined && s.values[opts.mark] !== undefined) {
        out += `<circle cx="${x(opts.mark)}" cy="${y(s.values[opts.mark])}" r="3" fill="${s.color}"/>`;
      }
    }
    return out + "</svg>";
  }

  // ---- state pictures ---------------------------------------------------------------------------
  function picture(p) {
    if (!p) return '<div class="muted">no picture</div>';
    if (p.kind === "blocksworld") return blocksPicture(p);
    if (p.kind === "gripper") return gripperPicture(p);
    return "";
  }
  function blocksPicture(p) {
    const bw = 34, bh = 20, gap = 8;
    const tallest = Math.max(1, ...p.stacks.map(s => s.length));
    const w = Math.max(120, p.stacks.length * (bw + gap) + gap), h = (tallest + 2) * bh + 26;
    let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" class="picture blocksworld">`;
    const floor = h - 6;
    out += `<line x1="0" y1="${floor}" x2="${w}" y2="${floor}" stroke="#555" stroke-width="2"/>`;
    p.stacks.forEach((stack, i) => {
      stack.forEach((block, j) => {
        const bx = gap + i * (bw + gap), by = floor - (j + 1) * bh;
        out += `<rect x="${bx}" y="${by}" width="${bw}" height="${bh - 1}" fill="#cfe0fc" stroke="#335"/><text x="${bx + bw / 2}" y="${by + 14}" text-anchor="middle" font-size="11">${esc(block)}</text>`;
      });
    });
    out += `<text x="4" y="13" font-size="11">hand: ${esc(p.holding || "empty")}</text>`;
    if (p.holding) out += `<rect x="${w - bw - 6}" y="2" width="${bw}" height="${bh - 1}" fill="#fde68a" stroke="#335"/><text x="${w - bw / 2 - 6}" y="16" text-anchor="middle" font-size="11">${esc(p.holding)}</text>`;
    return out + "</svg>";
  }
  function gripperPicture(p) {
    const rw = 100, gap = 8, perRow = 3;
    const tallest = Math.max(1, ...p.rooms.map(r => Math.ceil(r.balls.length / perRow)));
    const w = p.rooms.length * (rw + gap) + gap, h = 40 + tallest * 22 + 20 + p.grippers.length * 14;
    let out = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" class="picture gripper">`;
    p.rooms.forEach((room, i) => {
      const rx = gap + i * (rw + gap);
      out += `<rect x="${rx}" y="4" width="${rw}" height="${30 + tallest * 22}" fill="${room.robby ? "#ecfdf5" : "#fff"}" stroke="#555"/>`;
      out += `<text x="${rx + 4}" y="17" font-size="11" font-weight="600">${esc(room.name)}${room.robby ? " (Robby)" : ""}</text>`;
      room.balls.forEach((ball, j) => {
        const cx = rx + 18 + (j % perRow) * 32, cy = 34 + Math.floor(j / perRow) * 22;
        out += `<circle cx="${cx}" cy="${cy}" r="9" fill="#fca5a5" stroke="#7f1d1d"/><text x="${cx}" y="${cy + 3}" text-anchor="middle" font-size="8">${esc(ball.replace(/^ball/, "b"))}</text>`;
      });
    });
    let gy = 50 + tallest * 22;
    for (const g of p.grippers) {
      out += `<text x="6" y="${gy}" font-size="11">${esc(g.name)} gripper: ${esc(g.carrying || "free")}</text>`;
      gy += 14;
    }
    return out + "</svg>";
  }

  // ---- run page ---------------------------------------------------------------------------------
  function configCard(run) {
    const c = run.config || {};
    const llm = c.llm || {};
    const rows = [
      ["folder", run.path],
      ["episodes on file", run.episodes],
      ["agents", Object.keys(c.agents || {}).map(a => `${a} ${JSON.stringify(c.agents[a])}`).join("; ")],
      ["model", llm.model_id || llm.model || (c.llm === null ? "none" : "")],
      ["model digest", llm.model_sha256 || llm.digest || ""],
      ["backend", llm.backend ? `${llm.backend}${llm.base_url ? " at " + llm.base_url : ""}` : ""],
      ["adapter", c.adapter ? JSON.stringify(c.adapter) : (llm.adapter ? JSON.stringify(llm.adapter) : "")],
      ["profile", c.profile || ""],
      ["prompts version", c.prompts_version || ""],
      ["split", c.split || ""],
      ["seeds", Array.isArray(c.seeds) ? c.seeds.join(", ") : (c.seeds === undefined ? "" : JSON.stringify(c.seeds))],
      ["step budget", c.max_steps || ""],
      ["package version", c.package_version || ""],
      ["created", (c.run_info || {}).created_at || ""],
    ];
    const shown = new Set(["agents", "llm", "adapter", "profile", "prompts_version", "split", "seeds", "max_steps",
      "package_version", "run_info", "format", "domains", "problems"]);
    for (const key of Object.keys(c)) if (!shown.has(key)) rows.push([key, JSON.stringify(c[key])]);
    let out = `<div class="card"><h3>${esc(run.name)}</h3><dl class="kv">`;
    for (const [k, v] of rows) if (v !== "" && v !== undefined) out += `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`;
    out += "</dl>";
    if (Array.isArray(run.notes) && run.notes.length) out += `<div class="notes">${run.notes.map(esc).join("<br>")}</div>`;
    return out + "</div>";
  }
  function summaryTable() {
    let out = '<table id="summary"><thead><tr><th>agent</th><th>domain</th><th>episodes</th><th>SR</th><th>PR</th><th>steps</th><th>tokens / episode</th><th>prompt tokens / step</th></tr></thead><tbody>';
    for (const s of DATA.summary) {
      out += `<tr><td>${esc(s.label)}</td><td>${esc(s.domain)}</td><td class="num">${esc(s.episodes)}</td><td class="num">${pct(s.success_rate)}</td><td class="num">${pct(s.progress_rate)}</td><td class="num">${num(s.steps, 1)}</td><td class="num">${num(s.tokens, 0)}</td><td class="num">${num(s.prompt_tokens_per_step, 0)}</td></tr>`;
    }
    return out + "</tbody></table>";
  }
  function curves() {
    const domains = Array.from(new Set(DATA.curves.series.map(s => s.domain)));
    domains.sort((a, b) => (a === "all") - (b === "all") || a.localeCompare(b));
    let out = '<div class="legend">' + labels().map(l => `<span><i class="c${colorIndex(l)}"></i>${esc(l)}</span>`).join("") + "</div><div class=\"curves\">";
    for (const d of domains) {
      const series = DATA.curves.series.filter(s => s.domain === d)
        .map(s => ({ values: s.values, color: colorOf(s.label), name: `${s.label} (${esc(s.episodes)} episodes)` }));
      out += `<div class="curve" data-domain="${esc(d)}">${lineChart(series, { title: d === "all" ? "all domains" : d, width: 300, height: 170 })}</div>`;
    }
    return out + "</div>";
  }
  const COLUMNS = [
    ["id", "#", "num"], ["label", "agent", "text"], ["domain", "domain", "text"], ["problem", "problem", "text"],
    ["seed", "seed", "num"], ["success", "solved", "bool"], ["steps", "steps", "num"], ["optimal", "optimal", "num"],
    ["progress", "progress", "num"], ["tokens", "tokens", "num"], ["time_s", "time (s)", "num"],
  ];
  function matches(e, key, kind, filter) {
    if (!filter) return true;
    const v = e[key];
    if (kind === "bool") return filter === "any" || (filter === "yes") === Boolean(v);
    if (kind === "text") return String(v).toLowerCase().includes(filter.toLowerCase());
    const f = filter.trim();
    let m = f.match(/^(<=|>=|<|>|=)?\s*(-?[\d.]+)$/);
    if (m) {
      const x = Number(m[2]), op = m[1] || "=";
      if (v === null || v === undefined) return false;
      return op === "<" ? v < x : op === ">" ? v > x : op === "<=" ? v <= x : op === ">=" ? v >= x : v === x;
    }
    m = f.match(/^(-?[\d.]+)\s*(?:-|\.\.)\s*(-?[\d.]+)$/);
    if (m) return v !== null && v >= Number(m[1]) && v <= Number(m[2]);
    return true;
  }
  function visibleEpisodes() {
    const rows = EPISODES.filter(e => COLUMNS.every(([key, , kind]) => matches(e, key, kind, tableState.filters[key])));
    const { key, dir } = tableState;
    rows.sort((a, b) => {
      const x = a[key], y = b[key];
      if (x === y) return a.id - b.id;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * dir;
    });
    return rows;
  }
  function episodeRows() {
    const rows = visibleEpisodes();
    document.getElementById("shown").textContent = `${rows.length} of ${EPISODES.length} episodes`;
    return rows.map(e => `<tr data-id="${esc(e.id)}"><td class="num"><a href="#ep/${esc(e.id)}">${esc(e.id)}</a></td><td>${esc(e.label)}${e.memory ? ' <span class="badge" title="working memory recorded">memory</span>' : ""}</td><td>${esc(e.domain)}</td><td><a href="#ep/${esc(e.id)}" class="open">${esc(e.problem)}</a></td><td class="num">${esc(e.seed)}</td><td>${yesNo(e.success)}${e.error ? ' <span class="badge error" title="' + esc(e.error) + '">error</span>' : ""}</td><td class="num">${esc(e.steps)}</td><td class="num">${esc(e.optimal)}</td><td class="num">${num(e.progress, 2)}</td><td class="num">${esc(e.tokens)}</td><td class="num">${num(e.time_s, 2)}</td></tr>`).join("");
  }
  function episodeTable() {
    let head = "<tr>" + COLUMNS.map(([key, title]) => {
      const cls = tableState.key === key ? (tableState.dir > 0 ? "sorted-asc" : "sorted-desc") : "";
      return `<th class="sortable ${cls}" data-key="${key}">${esc(title)}</th>`;
    }).join("") + "</tr><tr class=\"filters\">";
    head += COLUMNS.map(([key, title, kind]) => {
      const v = tableState.filters[key] || "";
      if (kind === "bool") return `<th><select data-filter="${key}"><option value="any">any</option><option value="yes"${v === "yes" ? " selected" : ""}>yes</option><option value="no"${v === "no" ? " selected" : ""}>no</option></select></th>`;
      const hint = kind === "num" ? "e.g. >10, 5-9" : "contains";
      return `<th><input data-filter="${key}" placeholder="${hint}" value="${esc(v)}" aria-label="filter ${esc(title)}"></th>`;
    }).join("") + "</tr>";
    return `<p class="muted" id="shown"></p><table id="episodes"><thead>${head}</thead><tbody></tbody></table>`;
  }
  function wireEpisodeTable() {
    const table = document.getElementById("episodes");
    const body = table.querySelector("tbody");
    const refresh = () => { body.innerHTML = episodeRows(); };
    table.querySelectorAll("th.sortable").forEach(th => th.addEventListener("click", () => {
      const key = th.dataset.key;
      tableState.dir = tableState.key === key ? -tableState.dir : 1;
      tableState.key = key;
      table.querySelectorAll("th.sortable").forEach(o => o.classList.remove("sorted-asc", "sorted-desc"));
      th.classList.add(tableState.dir > 0 ? "sorted-asc" : "sorted-desc");
      refresh();
    }));
    table.querySelectorAll("[data-filter]").forEach(input => input.addEventListener("input", () => {
      tableState.filters[input.dataset.filter] = input.value;
      refresh();
    }));
    refresh();
  }
  function comparePicker() {
    const ls = labels();
    if (ls.length < 2) return '<p class="muted">One agent in this run: open an episode to compare it with another run\'s episode on the same problem.</p>';
    const opts = sel => ls.map(l => `<option${l === sel ? " selected" : ""}>${esc(l)}</option>`).join("");
    return `<p>Compare <select id="cmp-a">${opts(ls[0])}</select> with <select id="cmp-b">${opts(ls[1])}</select></p><div id="cmp-list"></div>`;
  }
  function pairsOf(a, b) {
    const byKey = new Map();
    for (const e of EPISODES) if (e.label === b) byKey.set(`${e.domain}|${e.split}|${e.problem}|${e.seed}`, e);
    return EPISODES.filter(e => e.label === a).map(e => [e, byKey.get(`${e.domain}|${e.split}|${e.problem}|${e.seed}`)]).filter(p => p[1]);
  }
  function wireComparePicker() {
    const a = document.getElementById("cmp-a"), b = document.getElementById("cmp-b");
    if (!a) return;
    const refresh = () => {
      const pairs = pairsOf(a.value, b.value);
      document.getElementById("cmp-list").innerHTML = pairs.length ? "<table id=\"pairs\"><tr><th>domain</th><th>problem</th><th>seed</th><th>" + esc(a.value) + "</th><th>" + esc(b.value) + "</th><th></th></tr>" +
        pairs.map(([x, y]) => `<tr><td>${esc(x.domain)}</td><td>${esc(x.problem)}</td><td>${esc(x.seed)}</td><td>${yesNo(x.success)} ${esc(x.steps)} steps, ${num(x.progress, 2)}</td><td>${yesNo(y.success)} ${esc(y.steps)} steps, ${num(y.progress, 2)}</td><td><a class="compare-link" href="#cmp/${esc(x.id)}/${esc(y.id)}">compare</a></td></tr>`).join("") + "</table>"
        : '<p class="muted">No problem played by both.</p>';
    };
    a.addEventListener("change", refresh);
    b.addEventListener("change", refresh);
    refresh();
  }
  function runPage() {
    where.textContent = DATA.runs.map(r => r.name).join(", ");
    app.innerHTML = `<section id="config"><h2>Configuration</h2>${DATA.runs.map(configCard).join("")}</section>` +
      `<section><h2>Summary</h2>${summaryTable()}</section>` +
      `<section><h2>Progress at step k</h2>${curves()}</section>` +
      `<section><h2>Compare agents</h2>${comparePicker()}</section>` +
      `<section><h2>Episodes</h2>${episodeTable()}</section>`;
    wireEpisodeTable();
    wireComparePicker();
  }

  // ---- episode page -----------------------------------------------------------------------------
  function memoryHtml(text) {
    // Retrieved pairs stand at their own subgoal, in place of its summary (a note in the current subgoal
    // says which); older records appended them, indented, under "Retrieved subgoal k".
    const shown = new Set([...text.matchAll(/Subgoal (\d+) is shown in full above/g)].map(m => m[1]));
    let inRetrieved = false;
    return text.split("\n").map(line => {
      let cls = "";
      const subgoal = /^Subgoal (\d+):/.exec(line);
      if (subgoal) { inRetrieved = shown.has(subgoal[1]); cls = "subgoalline"; }
      else if (/^Summary( \(met: (yes|no|unknown)\))?:/.test(line)) cls = "summaryline";
      else if (/^Retrieved subgoal \d+|^\s{2}(Action|Observation):|^(Observation: )?Cannot retrieve|^Action: retrieve|is shown in full above, in place of its summary/i.test(line)
               || (inRetrieved && /^(Action|Observation):/.test(line))) cls = "retrieved";
      return cls ? `<span class="${cls}">${esc(line)}</span>` : esc(line);
    }).join("\n");
  }
  function callsHtml(calls) {
    if (!calls.length) return "";
    return calls.map(c => `<span class="badge ${esc(c.purpose)}${c.error ? " error" : ""}" title="${esc(c.raw_output || c.error || "")}">${esc(c.purpose)}: ${esc(c.prompt_tokens)}+${esc(c.completion_tokens)} tokens, ${num(c.latency_s, 2)} s${c.error ? " (" + esc(c.error) + ")" : ""}</span>`).join(" ");
  }
  function otherEpisodes(e) {
    return EPISODES.filter(o => o.id !== e.id && o.domain === e.domain && o.problem === e.problem && o.split === e.split);
  }
  function episodePage(id) {
    const e = EPISODES[id];
    const d = detail(id);
    if (!e || !d) { app.innerHTML = `<p>No episode ${esc(id)}.</p>`; return; }
    where.textContent = `${e.label} / ${e.domain} / ${e.problem}`;
    const progress = [0].concat(d.steps.map(s => Number(s.progress)));
    const others = otherEpisodes(e);
    let out = `<h2 id="episode-title">${esc(e.label)} on ${esc(e.domain)} ${esc(e.problem)} (seed ${esc(e.seed)})</h2>`;
    out += `<div class="card"><dl class="kv"><dt>solved</dt><dd id="ep-solved">${yesNo(e.success)}</dd><dt>progress</dt><dd>${num(e.progress, 2)}</dd><dt>steps</dt><dd>${esc(e.steps)} (optimal ${esc(e.optimal)})</dd><dt>tokens</dt><dd>${esc(e.prompt_tokens)} prompt + ${esc(e.completion_tokens)} completion</dd><dt>time</dt><dd>${num(e.time_s, 2)} s</dd>`;
    if (d.model) out += `<dt>model</dt><dd>${esc(d.model)}</dd>`;
    if (Object.keys(d.meta || {}).length) out += `<dt>run info</dt><dd>${esc(JSON.stringify(d.meta))}</dd>`;
    if (Object.keys(d.flags).length) out += `<dt>flags</dt><dd>${esc(JSON.stringify(d.flags))}</dd>`;
    if (d.error) out += `<dt>error</dt><dd class="no">${esc(d.error)}</dd>`;
    for (const [k, v] of Object.entries(d.more || {})) out += `<dt>${esc(k)}</dt><dd>${esc(JSON.stringify(v))}</dd>`;
    out += `<dt>goal</dt><dd>${esc(d.goal)}</dd></dl></div>`;
    if (others.length) {
      out += `<p>Compare with: ${others.map(o => `<a class="compare-link" href="#cmp/${esc(e.id)}/${esc(o.id)}">${esc(o.label)}${o.seed !== e.seed ? " seed " + esc(o.seed) : ""}</a>`).join(" · ")}</p>`;
    }
    out += `<div class="card step"><div><span class="label">initial observation</span><pre>${esc(d.initial_observation)}</pre></div><div>${picture(d.initial_picture)}<div id="progress-curve">${lineChart([{ values: progress, color: "#2563eb" }], { width: 210, height: 90, title: "progress" })}</div></div></div>`;
    d.steps.forEach((s, i) => {
      out += `<div class="card step ${s.valid ? "valid" : "invalid"}" id="step-${esc(s.index)}" data-step="${esc(s.index)}"><div>`;
      out += `<div><span class="label">step ${esc(s.index)}</span>${s.subgoal_index !== null && s.subgoal_index !== undefined ? `<span class="badge">subgoal ${esc(s.subgoal_index)}: ${esc(s.subgoal)}</span>` : ""} ${callsHtml(s.calls)}</div>`;
      if (s.raw_output !== null && s.raw_output !== undefined) out += `<div><span class="label">written</span><pre class="raw">${esc(s.raw_output)}</pre></div>`;
      out += `<div><span class="label">sent</span><code class="action">${esc(s.action)}</code>`;
      out += ` <span class="label">parsed as</span><code class="canonical">${s.replayed ? esc(s.canonical === null ? "(nothing recognised)" : s.canonical) : "(not replayed)"}</code> <span class="muted">${esc(s.kind)}</span></div>`;
      out += `<div><span class="label">valid</span><span class="validity">${yesNo(s.valid)}</span>${s.why ? ` <span class="why">${esc(s.why)}</span>` : ""}</div>`;
      out += `<div><span class="label">observation</span><pre class="observation">${esc(s.observation)}</pre></div>`;
      out += `<div class="muted">progress ${num(s.progress, 2)} · ${esc(s.prompt_tokens)} prompt + ${esc(s.completion_tokens)} completion tokens · ${num(s.latency_s, 2)} s</div>`;
      if (typeof s.memory_view === "string") {
        out += `<details class="mem"${i === d.steps.length - 1 ? "" : ""}><summary>working memory as the model saw it (${esc(s.memory_view.length)} characters)</summary><pre class="memory">${memoryHtml(s.memory_view)}</pre></details>`;
      }
      if (Object.keys(s.more || {}).length) out += `<details><summary>more</summary><pre>${esc(JSON.stringify(s.more, null, 1))}</pre></details>`;
      out += `</div><div>${picture(s.picture)}<div class="mini" title="progress so far">${lineChart([{ values: progress.slice(0, i + 2), color: "#2563eb" }], { width: 200, height: 50, pad: 0, stroke: 1.4, maxX: progress.length - 1, mark: i + 1 })}</div></div></div>`;
    });
    if (d.memory && d.memory.length) out += `<h3>Final memory</h3><pre>${esc(JSON.stringify(d.memory, null, 1))}</pre>`;
    app.innerHTML = out;
    const panel = publishedPanel(e);
    const card = app.querySelector(".card");
    if (panel && card) card.after(panel);
  }

  // ---- the published models on the episode's problem (built from nodes: record text is never parsed as HTML)
  function node(tag, text, className) {
    const el = document.createElement(tag);
    if (text !== undefined) el.textContent = text;
    if (className) el.className = className;
    return el;
  }
  function publishedPanel(e) {
    const pub = DATA.published || {};
    const rows = e.split === pub.split ? (pub.problems || {})[`${e.domain}|${e.problem}`] : null;
    if (!rows || !rows.length) return null;
    const profile = ((DATA.runs[e.run] || {}).config || {}).profile || "pddlworlds";
    const box = node("div", undefined, "card published");
    box.id = "published";
    const solved = rows.filter(r => r.success).length;
    box.appendChild(node("h3", `Published models on ${e.domain} ${e.problem}: ${solved} of ${rows.length} solved`));
    box.appendChild(node("p", profile === "agentboard"
      ? "Played under the same profile (agentboard), 30 steps; step numbers as here. Source: " + pub.source + "."
      : `This episode was played under the ${profile} profile, whose feedback and progress differ from AgentBoard's: `
        + "not comparable, shown apart. Source: " + pub.source + ".", "muted"));
    const table = node("table");
    table.id = "published-table";
    const head = node("tr");
    for (const title of ["model", "solved", "progress", "steps at which progress rose"]) head.appendChild(node("th", title));
    table.appendChild(head);
    for (const r of rows) {
      const tr = node("tr");
      tr.appendChild(node("td", r.model));
      tr.appendChild(node("td", r.success ? "yes" : "no", r.success ? "yes" : "no"));
      tr.appendChild(node("td", num(r.progress, 2), "num"));
      tr.appendChild(node("td", r.rises === null ? "not recorded"
        : r.rises.map(([step, p]) => `${step}: ${num(p, 2)}`).join(", ") || "none"));
      table.appendChild(tr);
    }
    box.appendChild(table);
    return box;
  }

  // ---- compare page -----------------------------------------------------------------------------
  function sameAction(x, y) {
    if (!x || !y) return false;
    const norm = s => String(s.replayed && s.canonical !== null ? s.canonical : s.action || "").trim().toLowerCase();
    return norm(x) === norm(y) && x.valid === y.valid;
  }
  function stepCell(s) {
    if (!s) return '<span class="muted">(episode over)</span>';
    return `<div><span class="label">${esc(s.index)}</span><code>${esc(s.action)}</code> ${yesNo(s.valid)}</div>` +
      (s.canonical && s.canonical !== s.action ? `<div class="muted">parsed as ${esc(s.canonical)}</div>` : "") +
      `<pre>${esc(s.observation)}</pre><div class="muted">progress ${num(s.progress, 2)}${s.subgoal ? " · subgoal " + esc(s.subgoal_index) + ": " + esc(s.subgoal) : ""}</div>`;
  }
  function comparePage(a, b) {
    const ea = EPISODES[a], eb = EPISODES[b], da = detail(a), db = detail(b);
    if (!ea || !eb || !da || !db) { app.innerHTML = "<p>No such episodes.</p>"; return; }
    where.textContent = `compare ${ea.label} and ${eb.label} on ${ea.domain} ${ea.problem}`;
    const n = Math.max(da.steps.length, db.steps.length);
    let first = -1;
    for (let i = 0; i < n; i++) if (!sameAction(da.steps[i], db.steps[i])) { first = i; break; }
    const pa = [0].concat(da.steps.map(s => Number(s.progress))), pb = [0].concat(db.steps.map(s => Number(s.progress)));
    let out = `<h2>${esc(ea.domain)} ${esc(ea.problem)}: <a href="#ep/${esc(a)}">${esc(ea.label)}</a> and <a href="#ep/${esc(b)}">${esc(eb.label)}</a></h2>`;
    out += `<p id="first-difference">${first < 0 ? "The two episodes take the same actions." : `They first differ at step ${first + 1}.`}</p>`;
    out += `<div class="legend"><span><i class="c0"></i>${esc(ea.label)}</span><span><i class="c1"></i>${esc(eb.label)}</span></div>`;
    out += lineChart([{ values: pa, color: "#2563eb", name: ea.label }, { values: pb, color: "#dc2626", name: eb.label }], { width: 360, height: 140, title: "progress" });
    out += `<table class="compare" id="compare"><thead><tr><th>${esc(ea.label)}: ${ea.success ? "solved" : "not solved"} in ${esc(ea.steps)} steps</th><th>${esc(eb.label)}: ${eb.success ? "solved" : "not solved"} in ${esc(eb.steps)} steps</th></tr></thead><tbody>`;
    for (let i = 0; i < n; i++) {
      out += `<tr data-step="${i + 1}"${i === first ? ' class="diverge" id="diverge"' : ""}><td>${stepCell(da.steps[i])}</td><td>${stepCell(db.steps[i])}</td></tr>`;
    }
    app.innerHTML = out + "</tbody></table>";
    const marked = document.getElementById("diverge");
    if (marked) marked.scrollIntoView({ block: "center" });
  }

  function route() {
    const parts = (location.hash || "#run").slice(1).split("/");
    if ((parts[0] === "ep" || parts[0] === "cmp") && document.readyState === "loading") {
      app.innerHTML = "<p>Loading the episodes…</p>";  // their data blocks follow this script in the file
      document.addEventListener("DOMContentLoaded", route, { once: true });
      return;
    }
    window.scrollTo(0, 0);
    if (parts[0] === "ep") episodePage(Number(parts[1]));
    else if (parts[0] === "cmp") comparePage(Number(parts[1]), Number(parts[2]));
    else runPage();
    document.body.dataset.page = parts[0] || "run";
  }
  window.addEventListener("hashchange", route);
  route();
  document.body.dataset.ready = "1";
  document.addEventListener("DOMContentLoaded", () => { document.body.dataset.loaded = performance.now().toFixed(1); });
  // The first frame with everything laid out has been painted once a task queued from the next frame runs.
  requestAnimationFrame(() => setTimeout(() => { document.body.dataset.rendered = performance.now().toFixed(1); }, 0));
})();
