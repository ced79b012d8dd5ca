// linerate's HTML report: draws the charts of one run or procedure report (window.LR) with
// Chart.js, inlined with this script at build time; window.LR_OPTIONS names the option behind
// each key of the report's spec. Every chart that drew data is counted in #render-status, with
// any script error, so a headless browser can check the page.
(function () {
  "use strict";
  const R = window.LR;
  const OPTIONS = window.LR_OPTIONS || [];
  const status = { charts: 0, drawn: 0, errors: [] };
  window.addEventListener("error", (e) => status.errors.push(String(e.message)));
  const consoleError = console.error.bind(console);
  console.error = (...a) => { status.errors.push(a.map(String).join(" ")); consoleError(...a); };
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const main = document.getElementById("main");
  const section = (title, note) => {
    const s = el("section");
    s.appendChild(el("h2", {}, title));
    if (note) s.appendChild(el("p", { class: "note" }, note));
    main.appendChild(s);
    return s;
  };
  const fmt = (v, d = 3) => (v === null || v === undefined ? "-" : Number(v).toLocaleString("en", { maximumFractionDigits: d }));
  const fmtNs = (ns) => (ns < 1e3 ? `${fmt(ns, 0)} ns` : ns < 1e6 ? `${fmt(ns / 1e3, 2)} µs` : `${fmt(ns / 1e6, 3)} ms`);
  const fmtSeconds = (s) => (s === 0 ? "0 s" : s < 1e-3 ? `${fmt(s * 1e6, 3)} µs` : s < 1 ? `${fmt(s * 1e3, 3)} ms` : `${fmt(s, 3)} s`);
  const fmtBps = (b) => (b >= 1e9 ? `${fmt(b / 1e9, 3)} Gbit/s` : b >= 1e6 ? `${fmt(b / 1e6, 3)} Mbit/s` : `${fmt(b / 1e3, 3)} kbit/s`);
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const portsText = (ports) => (ports || []).map((p) => `${p.port} (${plural(p.queues, "queue", "queues")})`).join(", ") || "none";
  const chart = (parent, id, config) => {
    const box = el("div", { class: "chart" });
    const c = el("canvas", { id: id, width: 900, height: 320 });
    box.appendChild(c);
    parent.appendChild(box);
    config.options = Object.assign({ animation: false, responsive: false, plugins: { legend: { position: "bottom" } } },
                                   config.options || {});
    new Chart(c.getContext("2d"), config);
    status.charts++;
  };
  const table = (parent, head, rows) => {
    const t = el("table");
    const tr = el("tr");
    head.forEach((h) => tr.appendChild(el("th", {}, h)));
    t.appendChild(tr);
    rows.forEach((r) => {
      const row = el("tr");
      r.forEach((c) => {
        const td = el("td", {}, String(c));
        if (c === "PASS") td.className = "pass";
        if (c === "FAIL") td.className = "fail";
        row.appendChild(td);
      });
      t.appendChild(row);
    });
    parent.appendChild(t);
  };
  // A linear axis: from 0 unless told otherwise, so noise around a steady value stays small.
  const lin = (title, unit, fromZero = true) => ({ type: "linear", beginAtZero: fromZero,
                                                   title: { display: true, text: unit ? `${title} (${unit})` : title } });
  const logAxis = (title) => ({ type: "logarithmic", title: { display: true, text: title } });

  // The streams of a mix: a table, and their latency side by side (shown when there is more
  // than the one stream the options describe, or its sizes vary).
  const streamSections = (streams) => {
    if (!streams.length || (streams.length === 1 && (streams[0].sizes || []).length < 2)) return;
    const s = section("Streams", `${plural(streams.length, "stream", "streams")}; received, loss and latency where ` +
                      "the stream is signed and received in this run (\"-\": sent only).");
    const sizes = (st) => (st.sizes || []).map((z) => `${z.size} B ×${fmt(z.frames, 0)}`).join(", ");
    table(s, ["stream", "sent", "bytes (L2)", "Mpps", "received", "lost", "loss %", "reordered", "duplicates", "late",
              "p50", "p99", "max", "jitter", "sizes"],
          streams.map((st) => [st.name, fmt(st.sent, 0), fmt(st.sent_bytes, 0), fmt(st.tx_pps / 1e6), fmt(st.received, 0),
                               fmt(st.lost, 0), fmt(st.loss_pct, 4), fmt(st.reordered, 0), fmt(st.duplicates, 0),
                               fmt(st.late, 0), st.latency ? fmtNs(st.latency.p50_ns) : "-",
                               st.latency ? fmtNs(st.latency.p99_ns) : "-", st.latency ? fmtNs(st.latency.max_ns) : "-",
                               st.jitter_ns === null ? "-" : fmtNs(st.jitter_ns), sizes(st)]));
    const timed = streams.filter((st) => st.latency);
    if (timed.length) {
      chart(section("Latency per stream", "Each stream's percentiles (from its own histogram)."), "stream_latency", {
        type: "bar",
        data: { labels: timed.map((st) => st.name),
                datasets: [
                  { label: "p50", data: timed.map((st) => st.latency.p50_ns / 1e3), backgroundColor: "#1f77b4" },
                  { label: "p99", data: timed.map((st) => st.latency.p99_ns / 1e3), backgroundColor: "#ff7f0e" },
                  { label: "max", data: timed.map((st) => st.latency.max_ns / 1e3), backgroundColor: "#d62728" } ] },
        options: { scales: { y: logAxis("latency (µs)") } } });
    }
  };

  // ---- header: what ran, where, and the verdict ----
  const v = R.verdict || {};
  document.getElementById("verdict").textContent = `${(v.result || "?").toUpperCase()}${v.reason ? ": " + v.reason : ""}`;
  document.getElementById("verdict").className = `verdict ${v.result}`;
  const spec = R.spec || {}, env = R.environment || {};
  const f = spec.frame || {};
  const frameText = f.size === undefined ? "-" :
    `${R.procedure ? "" : `${f.size} B, `}${String(f.l4 || "").toUpperCase()} over IPv${f.ip}${f.vlan !== null && f.vlan !== undefined ? `, VLAN ${f.vlan}` : ""}: ` +
    `${f.src_ip}:${f.src_port} → ${f.dst_ip}:${f.dst_port}, ${plural(spec.flows || 1, "flow", "flows")}`;
  const facts = [["command", R.procedure || "run"], ["backend", spec.backend], ["TX ports", portsText(spec.tx)],
                 ["RX ports", portsText(spec.rx)]];
  if (R.procedure) facts.push(["frame sizes", R.mix ? `${R.mix.label}, mean ${fmt(R.mix.mean_size, 2)} B` :
    (spec.sizes || []).map((s) => `${s} B`).join(", ")]);
  facts.push(["frame", frameText], ["rate", spec.rate]);
  if (!R.procedure) facts.push(["trials", spec.trials]);
  facts.push(["linerate", env.linerate_version], ["kernel", env.kernel], ["host", env.hostname]);
  table(section("Run", "Every setting, by the option that sets it, is listed at the end."), ["", ""], facts);

  if (R.checks && R.checks.length) {
    const s = section("Checks");
    table(s, ["", "check", "measured", "threshold"],
          R.checks.map((c) => [c.pass ? "PASS" : "FAIL", c.name, c.measured_text, `--${c.option} ${c.threshold_text}`]));
  }

  // ---- latency: the histogram and the CDF from the report's buckets ----
  const latencyCharts = (L, title) => {
    const pcts = [["min", L.min_ns], ["p50", L.p50_ns], ["p90", L.p90_ns], ["p99", L.p99_ns], ["p99.9", L.p999_ns],
                  ["max", L.max_ns]].filter((p) => p[1] !== undefined);
    const s = section(title, `${fmt(L.count, 0)} frames timed: ` + pcts.map((p) => `${p[0]} ${fmtNs(p[1])}`).join(", ") + ".");
    const b = L.buckets || [];
    if (!b.length) {  // a report written before linerate kept the histogram: its percentiles only
      s.appendChild(el("p", { class: "note" }, "This report carries no latency histogram (an older linerate wrote it): its percentiles only."));
      chart(s, "latency", {
        type: "bar",
        data: { labels: pcts.map((p) => p[0]), datasets: [{ label: "latency (µs)", data: pcts.map((p) => p[1] / 1e3),
                                                             backgroundColor: "#17becf" }] },
        options: { scales: { y: logAxis("latency (µs)") } } });
      return;
    }
    // Bins of equal width on a log axis, each at least 2.5 % wide (three or more of the report's
    // buckets, which are 0.8 % wide), at most 60; a narrow distribution keeps the buckets.
    const lo = Math.max(b[0].lower_ns, 1), hi = b[b.length - 1].upper_ns;
    const n = Math.min(60, Math.floor(Math.log(hi / lo) / Math.log(1.025)));
    let bins;
    if (n < 10) {
      bins = b.map((x) => ({ lo: Math.max(x.lower_ns, 1), hi: x.upper_ns, count: x.count }));
    } else {
      const edge = (i) => lo * Math.pow(hi / lo, i / n);
      bins = Array.from({ length: n }, (_, i) => ({ lo: edge(i), hi: edge(i + 1), count: 0 }));
      b.forEach((x) => {
        const mid = Math.max((x.lower_ns + x.upper_ns) / 2, lo);
        bins[Math.min(n - 1, Math.max(0, Math.floor((n * Math.log(mid / lo)) / Math.log(hi / lo))))].count += x.count;
      });
    }
    // A filled step line: up at each bin's lower edge, down to 0 across any gap and at the end.
    const steps = [];
    bins.forEach((x, i) => {
      if (i === 0 || bins[i - 1].hi < x.lo) steps.push({ x: (i === 0 ? x.lo : bins[i - 1].hi) / 1e3, y: 0 });
      steps.push({ x: x.lo / 1e3, y: x.count });
    });
    steps.push({ x: bins[bins.length - 1].hi / 1e3, y: bins[bins.length - 1].count }, { x: bins[bins.length - 1].hi / 1e3, y: 0 });
    chart(s, "latency_hist", {
      type: "line",
      data: { datasets: [{ label: "frames", data: steps, stepped: "after", fill: "origin", pointRadius: 0,
                           borderColor: "#17becf", backgroundColor: "rgba(23, 190, 207, 0.35)" }] },
      options: { scales: { x: logAxis("latency (µs)"), y: lin("frames per bin") },
                 plugins: { legend: { display: false }, title: { display: true, text: "Histogram" } } } });
    // The CDF at every bucket's upper edge, and the report's percentiles on it.
    let seen = 0;
    const cdf = [{ x: lo / 1e3, y: 0 }].concat(b.map((x) => { seen += x.count; return { x: x.upper_ns / 1e3, y: seen / L.count }; }));
    const marks = [["p50", L.p50_ns, 0.5], ["p90", L.p90_ns, 0.9], ["p99", L.p99_ns, 0.99], ["p99.9", L.p999_ns, 0.999]]
      .filter((p) => p[1] !== undefined);
    chart(s, "latency_cdf", {
      type: "line",
      data: { datasets: [
        { label: "fraction of frames at most x", data: cdf, borderColor: "#17becf", pointRadius: 0 },
        { label: "p50, p90, p99, p99.9", data: marks.map((p) => ({ x: Math.max(p[1], 1) / 1e3, y: p[2] })), showLine: false,
          pointRadius: 6, pointStyle: "crossRot", borderColor: "#d62728", pointBorderColor: "#d62728",
          pointBorderWidth: 2 } ] },
      options: { scales: { x: logAxis("latency (µs)"), y: Object.assign(lin("fraction of frames"), { max: 1 }) },
                 plugins: { title: { display: true, text: "Cumulative distribution" }, legend: { position: "bottom" } } } });
  };

  if (!R.procedure) {
    // ---- a run ----
    const iv = R.intervals || [];
    const at = (get) => iv.map((i) => ({ x: i.t1, y: get(i) }));
    const rateSets = [
      { label: "TX pps", data: at((i) => i.tx.pps), borderColor: "#1f77b4" },
      { label: "RX pps", data: at((i) => i.rx.pps), borderColor: "#ff7f0e" } ];
    if (iv.some((i) => i.requested_pps))
      rateSets.push({ label: "requested pps", data: at((i) => i.requested_pps), borderColor: "#7f7f7f", borderDash: [6, 4],
                      pointRadius: 0 });
    chart(section("TX and RX rate over time"), "rate", {
      type: "line", data: { datasets: rateSets },
      options: { scales: { x: lin("time", "s", false), y: lin("packets/s") } } });
    const q = R.queues || [];
    chart(section("Per-queue balance"), "queues", {
      type: "bar",
      data: { labels: q.map((x) => `${x.dir} ${x.port} q${x.queue}`),
              datasets: [{ label: "packets", data: q.map((x) => x.packets), backgroundColor: "#2ca02c" }] },
      options: { scales: { y: lin("packets") } } });
    chart(section("Loss, reordering, duplicates and drops over time",
                  "Open sequence gaps (running loss), reordered and duplicate frames, port drops and TX back-pressure per interval."), "timeline", {
      type: "line",
      data: { datasets: [
        { label: "open sequence gaps", data: at((i) => i.seq_gaps), borderColor: "#d62728" },
        { label: "reordered", data: at((i) => i.rx_reordered || 0), borderColor: "#ff7f0e" },
        { label: "duplicates", data: at((i) => i.rx_duplicates || 0), borderColor: "#e377c2" },
        { label: "port drops", data: at((i) => i.drops), borderColor: "#9467bd" },
        { label: "back-pressure", data: at((i) => i.backpressure), borderColor: "#8c564b" } ] },
      options: { scales: { x: lin("time", "s", false), y: lin("count") } } });
    if (R.latency) latencyCharts(R.latency, `Latency (${R.latency.kind || "one-way"})`);
    streamSections(R.streams || []);
    const a = (R.totals || {}).loss_account;
    if (a) {
      chart(section("Who dropped it", `${fmt(a.lost, 0)} frames lost in all.`), "drops", {
        type: "bar",
        data: { labels: ["this host's receive path", "this host's egress device", "the path under test"],
                datasets: [{ label: "frames", data: [a.host_rx_dropped, a.egress_dropped, a.unaccounted],
                             backgroundColor: ["#9467bd", "#8c564b", "#d62728"] }] },
        options: { scales: { y: lin("frames") } } });
    }
  } else {
    // ---- a procedure ----
    const rows = R.rows || [];
    // A stream mix's row has no one size (null): the mix's label names it.
    const sizes = rows.map((r) => r.size === null ? (R.mix ? R.mix.label : "mix") : r.size);
    if (R.procedure === "sweep") {
      chart(section("Rate against frame size"), "sweep_rate", {
        type: "bar", data: { labels: sizes, datasets: [
          { label: "offered pps", data: rows.map((r) => r.offered.pps), backgroundColor: "#1f77b4" },
          { label: "received pps", data: rows.map((r) => r.received.pps), backgroundColor: "#ff7f0e" } ] },
        options: { scales: { x: { title: { display: true, text: "frame size (B)" } }, y: lin("packets/s") } } });
      if (rows.some((r) => r.latency))
        chart(section("Latency against frame size"), "sweep_lat", {
          type: "line", data: { labels: sizes, datasets: [
            { label: "p50 (µs)", data: rows.map((r) => r.latency && r.latency.p50_ns / 1e3), borderColor: "#2ca02c" },
            { label: "p99 (µs)", data: rows.map((r) => r.latency && r.latency.p99_ns / 1e3), borderColor: "#d62728" } ] },
          options: { scales: { x: { title: { display: true, text: "frame size (B)" } }, y: logAxis("latency (µs)") } } });
    } else if (R.procedure === "throughput") {
      const goals = [...new Set(rows.flatMap((r) => r.goals.map((g) => g.name)))];
      chart(section("Throughput against frame size"), "tp", {
        type: "bar", data: { labels: sizes, datasets: goals.map((g, k) => ({
          label: g, backgroundColor: ["#1f77b4", "#ff7f0e", "#2ca02c"][k % 3],
          data: rows.map((r) => { const x = r.goals.find((y) => y.name === g); return x && x.throughput ? x.throughput.pps : 0; }) })) },
        options: { scales: { y: lin("packets/s") } } });
    } else if (R.procedure === "latency") {
      chart(section("Latency against frame size"), "lat", {
        type: "line", data: { labels: sizes, datasets: [
          { label: "min", data: rows.map((r) => r.latency && r.latency.min_ns / 1e3), borderColor: "#2ca02c" },
          { label: "p99", data: rows.map((r) => r.latency && r.latency.p99_ns / 1e3), borderColor: "#d62728" },
          { label: "max", data: rows.map((r) => r.latency && r.latency.max_ns / 1e3), borderColor: "#9467bd" } ] },
        options: { scales: { y: logAxis("latency (µs)") } } });
    } else if (R.procedure === "frame-loss") {
      chart(section("Frame loss against load"), "fl", {
        type: "line", data: { datasets: rows.map((r, k) => ({
          label: r.size === null ? (R.mix ? R.mix.label : "mix") : `${r.size} B`, borderColor: ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"][k % 4],
          data: r.steps.map((s) => ({ x: s.load_pct, y: s.frame_loss_pct })) })) },
        options: { scales: { x: lin("load", "% of the highest"), y: lin("frame loss", "%") } } });
    } else if (R.procedure === "back-to-back") {
      chart(section("Longest burst that arrives whole"), "b2b", {
        type: "bar", data: { labels: sizes, datasets: [{ label: "mean burst (frames)", data: rows.map((r) => r.mean),
                                                         backgroundColor: "#1f77b4" }] } });
    }
    // One bar per trial (trial 1, 2, ...: never between two), from 0, with the load asked as a
    // reference: a trial a few packets off its load looks as close as it is.
    const tr = R.trials || [];
    chart(section("Every trial", "What the generator offered in each trial, in the order run; green: no loss, red: " +
                  "lost frames, grey: invalid. The dashes mark the load asked."), "trace", {
      type: "bar",
      data: { labels: tr.map((x) => String(x.index + 1)), datasets: [
        { type: "line", label: "load asked (pps)", data: tr.map((x) => x.load_pps), borderColor: "#222", borderDash: [6, 4],
          borderWidth: 1.5, pointRadius: 0, stepped: "middle", spanGaps: false },
        { label: "offered (pps)", data: tr.map((x) => x.offered_pps),
          backgroundColor: tr.map((x) => (!x.valid ? "#999" : x.loss_ratio > 0 ? "#d62728" : "#2ca02c")) } ] },
      options: { scales: { x: { title: { display: true, text: "trial" } }, y: lin("load", "pps") } } });
    const s = section("Trials");
    table(s, ["#", "size", "load pps", "offered pps", "TX s", "sent", "received", "loss %", "valid", "why"],
          tr.map((x) => [x.index + 1, x.size || "mix", x.load_pps ? fmt(x.load_pps, 0) : "max", fmt(x.offered_pps, 0), fmt(x.tx_seconds),
                         x.sent, x.received, fmt(100 * x.loss_ratio, 5), x.valid ? "yes" : "no: " + x.invalid_reason, x.why]));
  }

  // ---- every setting, by the option that sets it ----
  const valueText = (key, v) => {
    if (v === null || v === undefined) return null;
    if (Array.isArray(v)) {
      if (!v.length) return "none";
      if (v[0] !== null && typeof v[0] === "object" && "port" in v[0]) return portsText(v);
      if (Array.isArray(v[0])) return v.map((x) => x.join(",")).join("; ");
      if (v[0] !== null && typeof v[0] === "object")  // streams: "s1: size=64, l4=udp, ..." each
        return v.map((x) => (x.name ? `${x.name}: ` : "") + Object.entries(x)
          .filter(([k, y]) => k !== "name" && y !== null && !(Array.isArray(y) && !y.length))
          .map(([k, y]) => `${k}=${valueText(k, y)}`).join(", ")).join("; ");
      return v.join(key === "eal_args" ? " " : ", ");
    }
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v === "number") {
      if (/_s$/.test(key)) return fmtSeconds(v);
      if (/_pct$/.test(key)) return `${fmt(v, 4)} %`;
      if (/_bps$/.test(key)) return fmtBps(v);
      if (/_pps$/.test(key)) return `${fmt(v, 0)} pps`;
      return String(v);
    }
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  };
  const lookup = (path) => path.split(".").reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), spec);
  // A key needs its name beside its value only when the option is called something else
  // ("--proto": "l4: udp"; "--no-signature": "signature: yes"; "--size": "64").
  const bare = (name) => name.replace(/^-+/, "").replace(/-/g, "_").replace(/_(s|pct|bps|pps)$/, "").replace(/s$/, "");
  const used = new Set();
  const groups = [];
  OPTIONS.forEach((o) => {
    const keys = o.keys.filter((k) => lookup(k) !== undefined);
    if (!keys.length) return;
    keys.forEach((k) => used.add(k));
    const parts = keys.map((k) => {
      const t = valueText(k, lookup(k));
      const label = bare(k.split(".").pop());
      return t === null ? null : label === bare(o.option) || o.option.startsWith("-- ") ? t : `${label}: ${t}`;
    }).filter((t) => t !== null);
    let g = groups.find((x) => x.name === o.group);
    if (!g) groups.push((g = { name: o.group, rows: [] }));
    g.rows.push([o.option, parts.length ? parts.join(", ") : "not set"]);
  });
  const rest = [];
  const leaves = (obj, prefix) => Object.entries(obj).forEach(([k, x]) => {
    const path = prefix + k;
    if (x !== null && typeof x === "object" && !Array.isArray(x)) leaves(x, path + ".");
    else if (!used.has(path)) rest.push([path, valueText(k, x) === null ? "not set" : valueText(k, x)]);
  });
  leaves(spec, "");
  if (rest.length) groups.push({ name: "Other", rows: rest });
  const settings = section("Settings", "Every option's value in this run (\"not set\": not given, and no default applies).");
  const t = el("table", { class: "settings" });
  groups.forEach((g) => {
    const head = el("tr");
    head.appendChild(el("th", { colspan: "2" }, g.name));
    t.appendChild(head);
    g.rows.forEach(([name, value]) => {
      const tr = el("tr");
      tr.appendChild(el("td", { class: "option" }, name));
      tr.appendChild(el("td", value === "not set" ? { class: "unset" } : {}, value));
      t.appendChild(tr);
    });
  });
  settings.appendChild(t);

  // ---- every chart drew something: count the canvases with painted pixels ----
  document.querySelectorAll("canvas").forEach((c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 4 * 97) if (d[i] !== 0) { status.drawn++; break; }
  });
  const st = document.getElementById("render-status");
  st.setAttribute("data-charts", String(status.charts));
  st.setAttribute("data-drawn", String(status.drawn));
  st.setAttribute("data-errors", String(status.errors.length));
  st.textContent = status.errors.join("; ");
})();
