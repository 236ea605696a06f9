// The report's own script: views, filters, and episodes opened on demand from compressed chunks.
// Every text that came from a run (commands, outputs, messages, paths) is set with textContent.
"use strict";
(function () {
  const meta = JSON.parse(document.getElementById("termrl-meta").textContent);
  const PAGE = 200;
  let index = null;          // {columns, outcomes, runs, arms, rows, instructions}
  let shown = PAGE;
  const chunks = new Map();  // chunk number -> Promise of its records

  async function unpack(id) {
    const text = document.getElementById(id).textContent.trim();
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function loadIndex() {
    if (!index) index = unpack("termrl-index").then((data) => {
      const col = {};
      data.columns.forEach((name, i) => { col[name] = i; });
      data.col = col;
      data.byUid = new Map(data.rows.map((row) => [row[col.uid], row]));
      return data;
    });
    return index;
  }

  function chunk(n) {
    if (!chunks.has(n)) chunks.set(n, unpack("termrl-chunk-" + n));
    return chunks.get(n);
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function outcomeBadge(name) {
    const badge = el("span", {class: "badge outcome-" + name, text: meta.outcomeLabels[name] || name});
    badge.style.background = meta.outcomeColours[name] || "#777";
    return badge;
  }

  // -- views ---------------------------------------------------------------------------
  function show(view) {
    for (const section of document.querySelectorAll("section.view")) section.hidden = section.id !== "view-" + view;
    for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.view === view);
  }

  async function route() {
    const hash = decodeURIComponent(location.hash.slice(1));
    if (hash.startsWith("ep=")) {
      show("episode");
      await openEpisode(hash.slice(3));
    } else if (hash === "episodes") {
      show("episodes");
      await renderList();
    } else if (hash === "compare" && document.getElementById("view-compare")) {
      show("compare");
    } else {
      show("overview");
    }
  }

  // -- the list --------------------------------------------------------------------------
  function value(id) { return document.getElementById(id).value; }

  function filtered(data) {
    const c = data.col;
    const outcome = value("f-outcome"), arm = value("f-arm"), family = value("f-family");
    const prompt = value("f-prompt"), category = value("f-category"), text = value("f-text").trim().toLowerCase();
    const rows = data.rows.filter((row) =>
      (!outcome || data.outcomes[row[c.outcome]] === outcome) &&
      (!arm || data.arms[row[c.arm]] === arm) &&
      (!family || row[c.family] === family) &&
      (!prompt || row[c.prompt] === prompt) &&
      (!category || row[c.category] === category) &&
      (!text || row[c.task_id].toLowerCase().includes(text) || row[c.uid].toLowerCase().includes(text) ||
        (data.instructions[row[c.task_id]] || "").toLowerCase().includes(text)));
    const sort = value("f-sort");
    if (sort) {
      const key = c[{reward: "reward", commands: "commands", duration: "duration_s"}[sort.replace("-", "")]];
      const sign = sort.startsWith("-") ? -1 : 1;
      rows.sort((a, b) => sign * (a[key] - b[key]));
    }
    return rows;
  }

  async function renderList() {
    const data = await loadIndex();
    const c = data.col;
    const rows = filtered(data);
    const body = document.querySelector("#episode-list tbody");
    const fragment = document.createDocumentFragment();
    for (const row of rows.slice(0, shown)) {
      const link = el("a", {href: "#ep=" + encodeURIComponent(row[c.uid]), class: "ep-link", text: row[c.uid].split("/").pop()});
      fragment.append(el("tr", {"data-uid": row[c.uid]},
        el("td", {}, link), el("td", {text: data.arms[row[c.arm]]}), el("td", {text: row[c.family]}),
        el("td", {text: row[c.category]}), el("td", {}, outcomeBadge(data.outcomes[row[c.outcome]])),
        el("td", {class: "num", text: row[c.reward].toFixed(2)}), el("td", {class: "num", text: String(row[c.commands])}),
        el("td", {class: "num", text: row[c.duration_s].toFixed(1) + " s"})));
    }
    body.replaceChildren(fragment);
    document.getElementById("list-count").textContent =
      rows.length + " of " + data.rows.length + " episode(s)" + (rows.length > shown ? ", first " + shown + " shown" : "");
    document.getElementById("more").hidden = rows.length <= shown;
  }

  // -- one episode ---------------------------------------------------------------------------
  function fieldList(pairs) {
    const list = el("dl", {class: "fields"});
    for (const [name, val] of pairs) {
      if (val === undefined || val === null || val === "") continue;
      list.append(el("dt", {text: name}), el("dd", {text: typeof val === "object" ? JSON.stringify(val) : String(val)}));
    }
    return list;
  }

  function kv(obj) {
    return Object.entries(obj || {}).map(([k, v]) => k + " " + v).join(", ");
  }

  function entryText(entry) {
    if (!entry) return "absent";
    const parts = [entry.kind || entry.type || "?"];
    if (entry.mode !== undefined && entry.mode !== null) parts.push(Number(entry.mode).toString(8).padStart(4, "0"));
    if (entry.size !== undefined && entry.size !== null) parts.push(entry.size + " bytes");
    if (entry.sha256) parts.push("sha256 " + entry.sha256.slice(0, 12));
    if (entry.target) parts.push("-> " + entry.target);
    if (entry.uid !== undefined && entry.uid !== null) parts.push(entry.uid + ":" + entry.gid);
    return parts.join(" ");
  }

  function findingBox(finding) {
    return el("div", {class: "finding collateral"},
      el("strong", {text: "collateral: " + finding.kind}), " ", el("code", {class: "path", text: finding.path}),
      el("div", {class: "change", text: finding.detail || (entryText(finding.before) + " -> " + entryText(finding.after))}),
      el("div", {class: "change-entries", text: "before: " + entryText(finding.before) + "  |  after: " + entryText(finding.after)}));
  }

  function toolCallCommand(call) {
    try { return JSON.parse(call.function.arguments).command; } catch (e) { return call.function && call.function.arguments; }
  }

  function commandMeta(record) {
    if (!record) return null;
    const bits = ["exit code " + (record.exit_code === null || record.exit_code === undefined ? "none" : record.exit_code),
      record.duration_s + " s"];
    const box = el("div", {class: "cmd-meta"}, bits.join(" · "));
    if (record.timed_out) box.append(" ", el("span", {class: "flag timeout", text: "timed out"}));
    if (record.output_truncated) box.append(" ", el("span", {class: "flag truncated", text: "output truncated"}));
    if (record.shell_restarted) box.append(" ", el("span", {class: "flag restarted", text: "shell restarted"}));
    return box;
  }

  function transcriptView(rec) {
    const box = el("div", {class: "transcript"});
    const commands = rec.commands || [];
    const findingsAt = new Map();
    for (const finding of rec.collateral || []) {
      const at = finding.command_index === null || finding.command_index === undefined ? "end" : finding.command_index;
      if (!findingsAt.has(at)) findingsAt.set(at, []);
      findingsAt.get(at).push(finding);
    }
    let call = 0;
    const pending = [];
    for (const message of rec.transcript || []) {
      const role = message.role || "?";
      if (role === "system") {
        box.append(el("details", {class: "msg system"}, el("summary", {text: "system prompt"}),
          el("pre", {text: String(message.content || "")})));
      } else if (role === "user") {
        box.append(el("div", {class: "msg user"}, el("div", {class: "role", text: "task"}), el("pre", {text: String(message.content || "")})));
      } else if (role === "assistant") {
        const turn = el("div", {class: "msg assistant"}, el("div", {class: "role", text: "assistant"}));
        if (message.content) turn.append(el("pre", {class: "say", text: String(message.content)}));
        for (const tc of message.tool_calls || []) {
          call += 1;
          pending.push(call);
          turn.append(el("div", {class: "call", id: "cmd-" + call}, el("span", {class: "cmd-no", text: "$ command " + call}),
            el("pre", {class: "command", text: String(toolCallCommand(tc))})));
        }
        box.append(turn);
      } else if (role === "tool") {
        const number = pending.shift();
        const result = el("div", {class: "msg tool", "data-command": String(number)}, el("div", {class: "role", text: "output of command " + number}),
          commandMeta(commands[number - 1]), el("pre", {class: "output", text: String(message.content || "")}));
        if (rec.observed_at === number) {
          result.append(el("div", {class: "finding fault", text: "fault observed here: " + ((rec.fault || {}).family || "") +
            " on " + ((rec.fault || {}).target || "")}));
        }
        for (const finding of findingsAt.get(number) || []) result.append(findingBox(finding));
        box.append(result);
      } else {
        box.append(el("div", {class: "msg other"}, el("div", {class: "role", text: role}), el("pre", {text: JSON.stringify(message)})));
      }
    }
    const atEnd = findingsAt.get("end") || [];
    if (atEnd.length) {
      const end = el("div", {class: "msg end"}, el("div", {class: "role", text: "found at the end of the episode"}));
      for (const finding of atEnd) end.append(findingBox(finding));
      box.append(end);
    }
    return box;
  }

  function testsView(rec) {
    const verdict = rec.verdict || {};
    const box = el("div", {class: "tests"});
    const messages = verdict.messages || {};  // {nodeid: failure message}, where the verdict carries them
    const withMessages = Object.keys(messages).length > 0;
    const table = el("table", {class: "summary"}, el("thead", {}, el("tr", {}, el("th", {text: "hidden test"}), el("th", {text: "outcome"}),
      withMessages ? el("th", {text: "message"}) : null)));
    const body = el("tbody");
    for (const [nodeid, outcome] of Object.entries(verdict.outcomes || {})) {
      body.append(el("tr", {class: "test-" + outcome}, el("td", {text: nodeid}), el("td", {text: outcome}),
        withMessages ? el("td", {}, el("pre", {text: String(messages[nodeid] || "")})) : null));
    }
    table.append(body);
    box.append(table);
    for (const problem of verdict.problems || []) box.append(el("p", {class: "problem", text: "problem: " + problem}));
    if (verdict.error) box.append(el("p", {class: "problem", text: "grader error: " + verdict.error}));
    return box;
  }

  async function openEpisode(uid) {
    const view = document.getElementById("view-episode");
    const data = await loadIndex();
    const row = data.byUid.get(uid);
    if (!row) {
      view.replaceChildren(el("p", {class: "problem", text: "no episode " + uid + " in this report"}));
      return;
    }
    const c = data.col;
    const rec = (await chunk(row[c.chunk]))[row[c.slot]];
    const outcome = data.outcomes[row[c.outcome]];
    const parts = [
      el("p", {}, el("a", {href: "#episodes", text: "← episodes"}), " · ", el("a", {href: "#ep=" + encodeURIComponent(uid), class: "permalink", text: "permalink"})),
      el("h2", {class: "episode-title"}, el("span", {text: rec.episode_id + " "}), outcomeBadge(outcome)),
    ];
    if (rec.harness_error) parts.push(el("p", {class: "problem", text: "harness error: " + rec.harness_error}));
    parts.push(fieldList([
      ["run", data.runs[row[c.run]]], ["agent", rec.agent], ["model", rec.model], ["prompt", rec.prompt], ["task", rec.task_id],
      ["family", rec.family], ["attempt", rec.attempt], ["suite", rec.suite], ["category", rec.category], ["difficulty", rec.difficulty],
      ["reward", rec.reward], ["tests", rec.tests_passed + " / " + rec.tests_total], ["end reason", rec.end_reason],
      ["commands", rec.commands_used], ["tool calls", rec.tool_calls], ["tokens", kv(rec.tokens)], ["timings", kv(rec.timings)],
      ["limits enforced", kv(rec.enforced_limits)], ["decoys", (rec.decoys || []).join(", ")],
    ]));
    if (rec.fault) {
      parts.push(el("h3", {text: "Fault"}), fieldList([
        ["family", rec.fault.family], ["target", rec.fault.target], ["spare", rec.fault.spare],
        ["observed", rec.observed ? "yes, at command " + rec.observed_at : "no"], ["cleared", rec.fault_cleared ? "yes" : "no"],
        ["fabrication", (rec.fabrication || []).length ? rec.fabrication.join("; ") : "none"], ["fault error", rec.fault_error],
      ]));
    }
    const collateral = rec.collateral || [];
    parts.push(el("h3", {text: "Collateral (" + collateral.length + ")"}));
    const list = el("ul", {class: "collateral-list"});
    for (const f of collateral) {
      const at = f.command_index === null || f.command_index === undefined ? "at the end" : "command " + f.command_index;
      const jump = el("a", {href: "#ep=" + encodeURIComponent(uid), class: "jump", text: at});
      jump.addEventListener("click", (event) => {
        event.preventDefault();
        const target = document.getElementById("cmd-" + f.command_index);
        if (target) target.scrollIntoView({block: "center"});
      });
      list.append(el("li", {}, el("code", {class: "path", text: f.path}), " " + f.kind + " " + (f.detail || "") + " (", jump, ")"));
    }
    if (!collateral.length) list.append(el("li", {text: "none"}));
    parts.push(list, el("h3", {text: "Hidden tests"}), testsView(rec), el("h3", {text: "Transcript"}), transcriptView(rec));
    view.replaceChildren(...parts);
    window.scrollTo(0, 0);
  }

  // -- wiring -----------------------------------------------------------------------------------
  for (const id of ["f-outcome", "f-arm", "f-family", "f-prompt", "f-category", "f-sort", "f-text"]) {
    document.getElementById(id).addEventListener(id === "f-text" ? "input" : "change", () => { shown = PAGE; renderList(); });
  }
  const filters = document.getElementById("filters");
  filters.reset();  // a reload must not keep filters the list was not drawn with
  filters.addEventListener("submit", (event) => event.preventDefault());
  document.getElementById("more").addEventListener("click", () => { shown += PAGE; renderList(); });
  window.addEventListener("hashchange", route);
  route().then(() => { document.body.dataset.ready = "1"; });
})();
