// The operator dashboard: reads /api/… from the listener that served the page and draws it with Chart.js
// (served by linkout from Debian's libjs-chart.js). No build step, no inline script (the CSP allows none).
// The charts and the answers they were drawn from stay on window.linkoutDashboard, for the browser tests.
"use strict";

(function () {
  // One page serves both: /link/ID is one link's page, / the overview of every link.
  const link = location.pathname.startsWith("/link/") ? decodeURIComponent(location.pathname.split("/")[2] || "") : "";
  // loads: loads drawn; asked: loads started (an answer to an older one than the last is not drawn).
  const state = { charts: {}, answers: {}, loads: 0, asked: 0, query: "" };
  window.linkoutDashboard = state;

  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue(name).trim();
  Chart.defaults.color = color("--muted");
  Chart.defaults.borderColor = color("--line");
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  const palette = ["#0a84ff", "#30d158", "#ff9f0a", "#bf5af2", "#ff375f", "#64d2ff", "#ffd60a", "#ac8e68", "#5e5ce6", "#8e8e93"];
  // Visits: a hue per link and a shade per kind, so two links' shoppers differ and a kind looks alike on
  // every link: shoppers in the link's full colour, prefetches and HEADs lighter, bots greyed, untokened
  // darker, taps (shoppers on links that expect no token) a deep, less saturated shade, bots' requests there greyed. The hue comes from the link's place in the config, so a link keeps it on its own page; hues
  // a golden angle apart stay apart for any number of links. A link not in the config (unrouted) is grey.
  const kindShade = { shopper: [80, 45], prefetch: [70, 65], head: [55, 78], bot: [12, 55], untokened: [80, 28], tap: [45, 36], "tap-bot": [12, 40] };
  function visitColor(linkIndex, kind) {
    const [saturation, lightness] = kindShade[kind] || [40, 50];
    if (linkIndex < 0) return "hsl(0, 0%, " + lightness + "%)";
    return "hsl(" + Math.round((211 + 137.5 * linkIndex) % 360) + ", " + saturation + "%, " + lightness + "%)";
  }

  const $ = (id) => document.getElementById(id);
  const text = (value) => document.createTextNode(value == null ? "" : String(value));
  const time = (ms) => new Date(ms).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  const money = (milli, currency) => (milli / 1000).toLocaleString([], { style: "currency", currency });
  const percent = (x) => (100 * x).toFixed(1) + "%";

  function rows(tableId, list, cells, empty) {
    const body = $(tableId).tBodies[0];
    body.replaceChildren();
    for (const item of list) {
      const row = body.insertRow();
      for (const cell of cells(item)) {
        const td = row.insertCell();
        if (typeof cell === "object" && cell !== null) {
          td.appendChild(text(cell.value));
          if (cell.className) td.className = cell.className;
        } else {
          td.appendChild(text(cell));
        }
      }
    }
    if (list.length === 0) {
      const td = body.insertRow().insertCell();
      td.colSpan = $(tableId).tHead.rows[0].cells.length;
      td.appendChild(text(empty || "Nothing in this range."));
    }
  }

  /// Replaces a chart's data in place (one Chart per canvas for the page's life).
  function draw(id, type, labels, datasets, options) {
    const existing = state.charts[id];
    if (existing) {
      existing.data.labels = labels;
      existing.data.datasets = datasets;
      existing.update();
      return;
    }
    state.charts[id] = new Chart($(id), { type, data: { labels, datasets }, options: options || {} });
  }

  // Time axes: a dozen unrotated labels, readable on a phone, whatever the number of steps.
  const timeTicks = { maxTicksLimit: window.innerWidth < 600 ? 4 : 8, maxRotation: 0, autoSkip: true, autoSkipPadding: 12 };
  const stacked = { scales: { x: { stacked: true, ticks: timeTicks }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } };

  // The range is kept in the page's address as the API takes it (?range=week, or ?from=…&to=… in Unix
  // ms), so a reload or a shared address shows the same view; none there is the default, which
  // /api/overview chooses from the store's traffic (README) and answers with.

  /// The range the address names; empty for the default.
  function addressRange() {
    const address = new URLSearchParams(location.search), range = new URLSearchParams();
    for (const name of ["range", "from", "to"]) if (address.get(name)) range.set(name, address.get(name));
    return range;
  }

  // The custom inputs hold local time, without a zone.
  const localInput = (ms) => new Date(ms - new Date(ms).getTimezoneOffset() * 60000).toISOString().slice(0, 16);

  /// Sets the picker to `range` (nothing chosen for the default, until the overview says which it is).
  function showRange(range) {
    const custom = !range.get("range") && (range.has("from") || range.has("to"));
    $("preset").value = custom ? "custom" : range.get("range") || "";
    $("custom").hidden = !custom;
    for (const name of ["from", "to"]) {
      if (custom && range.has(name) && !isNaN(Number(range.get(name)))) $(name).value = localInput(Number(range.get(name)));
    }
  }

  /// The range the picker shows.
  function pickedRange() {
    const range = new URLSearchParams();
    if ($("preset").value === "custom") {
      const from = Date.parse($("from").value), to = Date.parse($("to").value);
      if (!isNaN(from)) range.set("from", String(from));
      if (!isNaN(to)) range.set("to", String(to));
    } else if ($("preset").value) {
      range.set("range", $("preset").value);
    }
    return range;
  }

  /// The API's query for `range` on this page.
  function apiQuery(range) {
    const params = new URLSearchParams(range);
    if (link) params.set("link", link);
    return params.toString();
  }

  /// The links to the other pages carry the address's range along (the default stays the default).
  function linkRange() {
    const range = addressRange().toString();
    for (const a of document.querySelectorAll("a[data-path]")) a.href = a.dataset.path + (range ? "?" + range : "");
  }

  async function get(path) {
    const response = await fetch(path, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    const body = await response.json();
    if (!response.ok) throw new Error(path.split("?")[0] + ": " + (body.error || response.status));
    return body;
  }

  function stepLabels(data) {
    const labels = [];
    // Steps under an hour: the clock time alone (a day's range is 96 short labels).
    const short = (ms) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    for (let at = data.from; at < data.to; at += data.stepMs) labels.push(data.stepMs < 3600000 ? short(at) : time(at));
    return labels;
  }

  function drawOverview(answer) {
    const data = answer.data;
    const labels = stepLabels(data);
    // One stack per link: a link's bar is its visits, split by kind (visitColor).
    const links = [...new Set(data.visits.map((s) => s.link))];
    const configured = answer.links.map((l) => l.id);
    draw("visits", "bar", labels, data.visits.map((s) => ({
      label: links.length > 1 || !link ? s.link + " · " + s.key : s.key,
      stack: s.link, data: s.counts, backgroundColor: visitColor(configured.indexOf(s.link), s.key),
    })), stacked);
    draw("refusals", "bar", labels, data.refusals.map((s, i) => ({
      label: (link ? "" : s.link + " · ") + s.key, data: s.counts, backgroundColor: palette[(i + 4) % palette.length],
    })), stacked);
    const share = (list) => [list.map((s) => (link ? "" : s.link + " · ") + s.key), list.map((s) => s.visits)];
    const [destinationLabels, destinationVisits] = share(data.destinations);
    draw("destinations", "doughnut", destinationLabels, [{ label: "shoppers", data: destinationVisits, backgroundColor: palette }],
      { plugins: { legend: { position: "bottom" } } });
    const [countryLabels, countryVisits] = share(data.countries);
    draw("countries", "bar", countryLabels, [{ label: "shoppers", data: countryVisits, backgroundColor: palette[0] }],
      { indexAxis: "y", plugins: { legend: { display: false } }, scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } });
    if (showsExperiments(answer)) {
      draw("experiments", "line", labels, data.experiments.map((v, i) => ({
        label: (link ? "" : v.link + " · ") + v.experiment + " · " + v.variant, data: v.counts,
        borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length], tension: 0.2,
      })), { scales: { x: { ticks: timeTicks }, y: { beginAtZero: true, ticks: { precision: 0 } } } });
    }
    rows("health", data.health, (target) => [target.target, {
      value: target.periods.map((p) => (p.up ? "up " : "DOWN ") + time(p.from) + "–" + time(p.to)).join(", "),
      className: target.periods.some((p) => !p.up) ? "down" : "",
    }]);
  }

  /// The experiments' chart and table, or one sentence on how to add an experiment when no link in view
  /// has one configured and the range holds no variant's visits (an ended experiment's still show).
  function showsExperiments(overview) {
    const any = overview.links.some((l) => l.experiment && (!link || l.id === link)) || overview.data.experiments.length > 0;
    $("experiments-body").hidden = !any;
    $("no-experiment").hidden = any;
    $("no-experiment-who").textContent = link ? "This link has no experiment." : "No link has an experiment.";
    return any;
  }

  /// The headline numbers of the range, as /api/overview counted them.
  function drawTotals(totals) {
    const count = (n) => n.toLocaleString();
    $("total-visits").textContent = count(totals.visits);
    // Taps (shoppers' requests on links with token "none") carry no token: beside the visits, never among
    // the refusals; bots' requests on those links are no taps (the statement counts taps the same way).
    $("total-visits-note").textContent = "with a token, in the range" +
      (totals.taps ? "; and " + count(totals.taps) + " taps (shoppers) on links that expect none" : "") +
      (totals.botTaps ? "; " + count(totals.botTaps) + " bot requests there, no taps" : "");
    $("total-shoppers").textContent = count(totals.shoppers);
    $("total-shoppers-note").textContent = totals.visits ? percent(totals.shoppers / totals.visits) + " of the visits" : "in the range";
    $("total-refused").textContent = percent(totals.refusalRate);
    $("total-refused-note").textContent = count(totals.refusals) + " of " + count(totals.linkOuts) + " link-outs";
  }

  /// The share of production tokens whose report is due (past their window, or their lines gathered) that
  /// Apple accepted: a healthy gateway reads 100 %. Sandbox tokens, and tokens still in their window, apart.
  function drawReported(answer) {
    if (state.answers.reporter && !state.answers.reporter.enabled) {
      $("total-reported").textContent = "OFF";
      $("total-reported-note").textContent = "no reporting section: nothing is sent";
      return;
    }
    if (answer.pending) {
      $("total-reported").textContent = "…";
      $("total-reported-note").textContent = "counting every token";
      return;
    }
    const due = answer.due;
    $("total-reported").textContent = due.tokens ? percent(due.reported / due.tokens) : "–";
    $("total-reported-note").textContent = due.tokens
      ? due.reported.toLocaleString() + " of " + due.tokens.toLocaleString() + " production tokens due a report"
      : "no production token due a report yet";
  }

  function drawExperiments(answer) {
    // drawOverview, first, decided whether the section shows (showsExperiments).
    if ($("experiments-body").hidden) return;
    rows("variants", answer.variants, (v) => [
      v.link, v.experiment, v.variant, { value: v.visits, className: "num" }, { value: v.purchasers, className: "num" },
      percent(v.conversion) + " (" + percent(v.interval.low) + "–" + percent(v.interval.high) + ")",
      Object.entries(v.revenue).map(([currency, milli]) => money(milli, currency)).join(", "),
    ]);
  }

  /// Asks /api/reporting again in 2 s (once at a time): while the first count after a start is made, and
  /// while the answer is an older count the server is making anew, so the panel never stays one look behind.
  function askReportingAgain() {
    if (state.reportingRetry) return;
    state.reportingRetry = setTimeout(async () => {
      state.reportingRetry = null;
      try {
        state.answers.reporting = await get("/api/reporting");
        drawReporting(state.answers.reporting);
      } catch (error) {
        $("reporting-at").textContent = String(error.message || error);
      }
    }, 2000);
  }

  /// A count older than this is being made anew by the server (it keeps one 30 s, longer on a large store).
  const freshReportingMs = 30000;

  function drawReporting(answer) {
    drawReported(answer);
    // The first count after a start reads every token, on the server's own thread: ask again until it is done.
    if (answer.pending) {
      $("reporting-at").textContent = "Counting every token's report state (the first count after a start)…";
      askReportingAgain();
      return;
    }
    const age = Date.now() - answer.at;
    if (age > freshReportingMs && (state.reportingPolls = (state.reportingPolls || 0) + 1) <= 60) {
      $("reporting-at").textContent = "Counted at " + time(answer.at) + "; counting again now, the panel follows when it is done.";
      askReportingAgain();
    } else {
      if (age <= freshReportingMs) state.reportingPolls = 0;
      $("reporting-at").textContent = "Counted at " + time(answer.at) + " (the reporter's own state above is read on every load).";
    }
    const order = ["waiting", "due", "sending", "retrying", "sent", "failed"];
    draw("states", "bar", order, [{ label: "tokens", data: order.map((k) => answer.states[k] || 0),
      backgroundColor: ["#8e8e93", "#ff9f0a", "#64d2ff", "#bf5af2", "#30d158", "#ff375f"] }],
      { plugins: { legend: { display: false }, title: { display: true, text: "Tokens by report state" } },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } });
    // Day 10 and later in red: Apple has reminded, or will today.
    draw("ages", "bar", answer.ages.map((a) => (a.day === 14 ? "14+" : String(a.day))), [{
      label: "unreported tokens", data: answer.ages.map((a) => a.tokens),
      backgroundColor: answer.ages.map((a) => (a.day >= 10 ? "#ff375f" : a.day >= 7 ? "#ff9f0a" : "#0a84ff")),
    }], { plugins: { legend: { display: false }, title: { display: true, text: "Unreported tokens by age in days (day 10: Apple's reminder)" } },
      scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } });
  }

  /// Whether anything reaches Apple, and why reports wait: from /api/reporter, read fresh on each load.
  function drawReporter(answer) {
    const line = $("reporter-state");
    drawAlerts();
    const parts = [answer.enabled ? (answer.pausedUntil ? "Reporter: paused" : "Reporter: on") : "Reporter: off"];
    parts.push(answer.toSend + " to send, " + answer.sending + " sending, " + answer.retrying + " waiting to be sent again");
    if (answer.nextTryAt && answer.toSend + answer.sending + answer.retrying > 0) parts.push("next try " + time(answer.nextTryAt));
    const backlog = answer.backlog;
    if (backlog && backlog.waiting > 0) {
      parts.push(backlog.perSecond.toFixed(1) + " sent a second (last 5 minutes)" +
        (backlog.clearMs ? ", clear in " + Math.ceil(backlog.clearMs / 60000) + " min" : ", none sent lately") +
        (backlog.passesDay10 ? " — at this rate the oldest waiting token passes day 10 (" + time(backlog.day10At) + ")" : ""));
    }
    if (answer.lastError) parts.push("last error " + time(answer.lastError.at) + ": " + answer.lastError.answer.slice(0, 200));
    line.textContent = parts.join(" · ");
    line.className = !answer.enabled || answer.pausedUntil || answer.retrying > 0 || (backlog && backlog.passesDay10) ? "bad" : "";
    rows("waiting", answer.waiting, (w) => [time(w.nextAttemptAt), w.externalPurchaseId, w.bundleId, w.status,
      { value: w.attempts, className: "num" }, { value: w.failures, className: "num" }, w.lastAnswer || "no answer (its sender stopped)"], "None.");
    rows("failed", answer.refused, (f) => [time(f.finishedAt), f.externalPurchaseId, f.bundleId, f.status, f.month,
      f.retryAt ? "on its own at " + time(f.retryAt) : "by linkout report retry only (report status gives its id)",
      f.answer], "None.");
  }

  /// What needs a person, above everything, from the answers read on this load: reporting off or paused,
  /// reports Apple refused and the months they hold open, webhook events held back from Apple, and months
  /// whose deadline is near or past with tokens outstanding. One line each, worst first.
  function drawAlerts() {
    const alert = $("reporter-alert"), lines = [];
    const reporter = state.answers.reporter, providers = state.answers.providers, months = state.books && state.books.monthClose;
    if (reporter && !reporter.enabled) {
      lines.push("Reporting to Apple is OFF: the config has no reporting section, so no token is reported, and Apple expects every one reported. Add one: docs/reporting.md, “Set it up, step by step”.");
    } else if (reporter && reporter.pausedUntil) {
      lines.push("Reporting is PAUSED until " + time(reporter.pausedUntil) + ": Apple refused the key (401). Check reporting.keyFile, keyId, issuerId and the apps' bundle IDs.");
    }
    if (reporter && reporter.refusedCount) {
      const months = reporter.refusedMonths.length ? " and keep " + reporter.refusedMonths.join(", ") + " open" : "";
      lines.push(reporter.refusedCount + " report(s) Apple refused hold their tokens unreported" + months
        + ": see “Reports Apple refused” below; linkout report retry --all sends them again.");
    }
    for (const m of months || []) {
      if (m.closed || m.daysLeft > 3) continue;
      lines.push("Month close: " + m.month + " has " + m.outstanding.toLocaleString() + " token(s) without an accepted report; "
        + (m.daysLeft > 0 ? m.daysLeft + " day(s) left to its deadline." : "its deadline has passed (OVERDUE).") + " linkout report status says why.");
    }
    const held = providers ? Object.values(providers.events).reduce((n, e) => n + (e.held || 0), 0) : 0;
    if (held) lines.push(held + " payment provider event(s) held: their lines are never sent to Apple until mended (see the held events below).");
    alert.replaceChildren(...lines.map((text) => Object.assign(document.createElement("span"), { textContent: text })));
    alert.hidden = lines.length === 0;
  }

  /// The payment providers' webhook events (/api/payment-providers): counts by outcome, then the events a
  /// person may need to look at, held ones in red.
  function drawProviders(answer) {
    const outcomes = ["taken", "ignored", "unmatched", "parked", "waiting", "held"];
    rows("provider-events", Object.keys(answer.events), (provider) => [provider].concat(outcomes.map((o) => (
      { value: answer.events[provider][o], className: o === "held" && answer.events[provider][o] > 0 ? "num bad" : "num" }))),
      "No webhook events yet.");
    rows("provider-open", answer.open, (e) => [time(e.receivedAt), e.provider, e.type, e.objectId,
      { value: e.outcome, className: e.outcome === "held" ? "bad" : "" }, e.externalPurchaseId || "–",
      e.outcome === "parked" ? "waiting for " + e.waitingFor : e.problem || ""], "None.");
  }

  /// Milli-units as the currency's own decimals, without converting anything.
  const units = (milli, currency) => (currency ? (milli / 1000).toLocaleString([], { style: "currency", currency }) : "–");

  function drawStatement(answer) {
    $("statement-caption").textContent = "Statement " + answer.month + " (UTC)"
      + (answer.sandboxTokens > 0 ? " · " + answer.sandboxTokens + " sandbox token(s) left out" : "");
    rows("statement", answer.rows, (r) => [r.bundleId || "(no app)", r.region || "(none)", r.kind, r.currency || "–",
      { value: r.tokens, className: "num" }, { value: r.tokensVisited, className: "num" }, { value: r.tokensPurchased, className: "num" },
      { value: units(r.salesInWindow, r.currency), className: "num" }, { value: units(r.salesOutsideWindow, r.currency), className: "num" },
      { value: units(r.commission, r.currency), className: "num" }, { value: r.taps, className: "num" }], "No token and no sale this month.");
  }

  /// Outstanding tokens coloured by the deadline: red within 3 days of it or past it (as the log warns),
  /// amber within a week, plain before (a month is open until its tokens' windows pass).
  function drawMonthClose(list) {
    const urgency = (m) => (m.closed ? "" : m.daysLeft <= 3 ? " down" : m.daysLeft <= 7 ? " warn" : "");
    rows("month-close", list.slice().reverse(), (m) => [m.month, { value: m.tokens, className: "num" }, { value: m.reported, className: "num" },
      { value: m.outstanding, className: "num" + urgency(m) }, new Date(m.deadline - 1).toISOString().slice(0, 10),
      { value: m.closed ? "closed" : (m.daysLeft > 0 ? String(m.daysLeft) : "OVERDUE"), className: urgency(m).trim() }], "No token yet.");
    drawAlerts();
  }

  async function loadStatement() {
    const month = $("statement-month").value;
    try {
      const [statement, months] = await Promise.all([
        get("/api/statement?month=" + encodeURIComponent(month)), get("/api/month-close"),
      ]);
      state.books = { statement, monthClose: months };
      drawStatement(statement);
      drawMonthClose(months);
    } catch (error) {
      $("statement-caption").textContent = String(error.message || error);
    }
  }

  function drawLatest(answer) {
    rows("latest", answer.visits, (v) => [time(v.at), v.id, v.link, v.kind, v.country, v.destination, v.variant || ""]);
    rows("latest-refusals", answer.refusals, (r) => [time(r.bucketStart), r.link, r.reason, { value: r.refusals, className: "num" }]);
  }

  /// Draws the page for `range` (empty: the default).
  async function load(range) {
    const mine = ++state.asked;
    const status = $("status");
    status.className = "";
    status.textContent = "Loading…";
    try {
      // The default is the overview's to choose: the other answers are asked for the range it chose.
      const first = range.toString() ? null : await get("/api/overview?" + apiQuery(range));
      const shown = first ? new URLSearchParams({ range: first.range }) : range;
      const q = apiQuery(shown);
      const [overview, experiments, reporting, latest, reporter, providers] = await Promise.all([
        first || get("/api/overview?" + q), get("/api/experiments?" + q), get("/api/reporting"),
        get("/api/latest?limit=20" + (link ? "&link=" + encodeURIComponent(link) : "")), get("/api/reporter"),
        get("/api/payment-providers"),
      ]);
      if (mine !== state.asked) return;
      state.answers = { overview, experiments, reporting, latest, reporter, providers };
      if (!$("links").childElementCount) {
        const overviewLink = document.createElement("a");
        overviewLink.dataset.path = "/";
        overviewLink.textContent = "All links";
        if (!link) overviewLink.setAttribute("aria-current", "page");
        $("links").appendChild(overviewLink);
        for (const info of overview.links) {
          const a = document.createElement("a");
          a.dataset.path = "/link/" + encodeURIComponent(info.id);
          a.textContent = info.id;
          if (info.id === link) a.setAttribute("aria-current", "page");
          $("links").appendChild(a);
        }
      }
      linkRange();
      showRange(shown);
      if (link) {
        const info = overview.links.find((l) => l.id === link);
        $("title").textContent = link + (info ? " · " + info.path + " · " + info.country : "");
        document.title = "linkout · " + link;
      } else {
        $("title").textContent = "Overview";
        document.title = "linkout · overview";
      }
      drawTotals(overview.data.totals);
      drawOverview(overview);
      drawExperiments(experiments);
      drawReporter(reporter);
      drawReporting(reporting);
      drawProviders(providers);
      drawLatest(latest);
      await state.statementLoaded;
      state.query = q;
      state.loads += 1;
      status.textContent = time(overview.data.from) + " – " + time(overview.data.to) + ", steps of " + overview.data.stepMs / 60000 + " min"
        + (first ? " (the default" + (first.range === "hour" ? ": no traffic is older than an hour" : "") + ")" : "");
    } catch (error) {
      if (mine !== state.asked) return;
      status.className = "error";
      status.textContent = String(error.message || error);
    }
  }

  /// A range picked: into the address (a step back in history returns to the one before), then drawn.
  function pick() {
    const range = pickedRange();
    history.pushState(null, "", location.pathname + (range.toString() ? "?" + range : ""));
    load(range);
  }

  // The statement's month: this month (UTC) until another is picked.
  $("statement-month").value = new Date().toISOString().slice(0, 7);
  $("statement-form").addEventListener("submit", (event) => {
    event.preventDefault();
    loadStatement();
  });
  // The page counts as drawn (state.query, for the browser tests) once the statement is too.
  state.statementLoaded = loadStatement();

  $("preset").addEventListener("change", () => {
    const custom = $("preset").value === "custom";
    $("custom").hidden = !custom;
    // A custom range starts as the one shown.
    const shown = state.answers.overview && state.answers.overview.data;
    if (custom && shown && !$("from").value && !$("to").value) {
      $("from").value = localInput(shown.from);
      $("to").value = localInput(shown.to);
    }
    if (!custom) pick();
  });
  $("range").addEventListener("submit", (event) => {
    event.preventDefault();
    pick();
  });
  window.addEventListener("popstate", () => {
    showRange(addressRange());
    load(addressRange());
  });
  showRange(addressRange());
  load(addressRange());
})();
