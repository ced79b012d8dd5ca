// linerate's HTML report: draws the charts of one run or procedure report (window.LR) with
// Chart.js, inlined with this script at build time. Every chart that drew data is counted in
// #render-status, with any script error, so a headless browser can check the page.
(function () {
  "use strict";
  const R = window.LR;
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
  const lin = (title, unit) => ({ type: "linear", title: { display: true, text: unit ? `${title} (${unit})` : title } });

  // ---- header: what ran, where, and the verdict ----
  const v = R.verdict || {};
  document.getElementById("verdict").textContent = `${(v.result || "?").toUpperCase()}${v.reason ? ": " + v.reason : ""}`;
  document.getElementById("verdict").className = `verdict ${v.result}`;
  const spec = R.spec || {}, env = R.environment || {};
  const facts = section("Run");
  table(facts, ["", ""], [
    ["command", R.procedure || "run"], ["backend", spec.backend], ["TX ports", JSON.stringify(spec.tx)],
    ["RX ports", JSON.stringify(spec.rx)], ["frame", JSON.stringify(spec.frame)], ["rate", spec.rate],
    ["linerate", env.linerate_version], ["kernel", env.kernel], ["host", env.hostname],
  ]);

  if (R.checks && R.checks.length) {
    const s = section("Checks");
    table(s, ["", "check", "measured", "threshold"],
          R.checks.map((c) => [c.pass ? "PASS" : "FAIL", c.name, c.measured_text, `--${c.option} ${c.threshold_text}`]));
  }

  if (!R.procedure) {
    // ---- a run ----
    const iv = R.intervals || [];
    const t = iv.map((i) => i.t1.toFixed(2));
    chart(section("TX and RX rate over time"), "rate", {
      type: "line",
      data: { labels: t, datasets: [
        { label: "TX pps", data: iv.map((i) => i.tx.pps), borderColor: "#1f77b4" },
        { label: "RX pps", data: iv.map((i) => i.rx.pps), borderColor: "#ff7f0e" } ] },
      options: { scales: { x: lin("time", "s"), y: lin("packets/s") } } });
    const q = R.queues || [];
    chart(section("Per-queue balance"), "queues", {
      type: "bar",
      data: { labels: q.map((x) => `${x.dir} ${x.port} q${x.queue}`),
              datasets: [{ label: "packets", data: q.map((x) => x.packets), backgroundColor: "#2ca02c" }] },
      options: { scales: { y: lin("packets") } } });
    chart(section("Loss, reordering, duplicates and drops over time",
                  "Open sequence gaps (running loss), reordered and duplicate frames, port drops and TX back-pressure per interval."), "timeline", {
      type: "line",
      data: { labels: t, datasets: [
        { label: "open sequence gaps", data: iv.map((i) => i.seq_gaps), borderColor: "#d62728" },
        { label: "reordered", data: iv.map((i) => i.rx_reordered || 0), borderColor: "#ff7f0e" },
        { label: "duplicates", data: iv.map((i) => i.rx_duplicates || 0), borderColor: "#e377c2" },
        { label: "port drops", data: iv.map((i) => i.drops), borderColor: "#9467bd" },
        { label: "back-pressure", data: iv.map((i) => i.backpressure), borderColor: "#8c564b" } ] },
      options: { scales: { x: lin("time", "s"), y: lin("count") } } });
    const L = R.latency;
    if (L) {
      const pts = [["min", L.min_ns, 0], ["p50", L.p50_ns, 0.5], ["p90", L.p90_ns, 0.9], ["p99", L.p99_ns, 0.99],
                   ["p99.9", L.p999_ns, 0.999], ["max", L.max_ns, 1]];
      const s = section(`Latency (${L.kind || "one-way"})`, `${fmt(L.count, 0)} frames timed.`);
      chart(s, "latency", {
        type: "bar",
        data: { labels: pts.map((p) => p[0]), datasets: [{ label: "latency (µs)", data: pts.map((p) => p[1] / 1e3),
                                                             backgroundColor: "#17becf" }] },
        options: { scales: { y: { type: "logarithmic", title: { display: true, text: "µs" } } } } });
      chart(s, "latency_cdf", {
        type: "line",
        data: { datasets: [{ label: "CDF", data: pts.map((p) => ({ x: p[1] / 1e3, y: p[2] })), borderColor: "#17becf",
                             stepped: false }] },
        options: { scales: { x: { type: "logarithmic", title: { display: true, text: "latency (µs)" } },
                             y: lin("fraction of frames") } } });
    }
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
    const sizes = rows.map((r) => r.size);
    if (R.procedure === "sweep") {
      chart(section("Rate against frame size"), "sweep_rate", {
        type: "bar", data: { labels: sizes, datasets: [
          { label: "offered pps", data: rows.map((r) => r.offered.pps), backgroundColor: "#1f77b4" },
          { label: "received pps", data: rows.map((r) => r.received.pps), backgroundColor: "#ff7f0e" } ] },
        options: { scales: { y: lin("packets/s") } } });
      if (rows.some((r) => r.latency))
        chart(section("Latency against frame size"), "sweep_lat", {
          type: "line", data: { labels: sizes, datasets: [
            { label: "p50 (µs)", data: rows.map((r) => r.latency && r.latency.p50_ns / 1e3), borderColor: "#2ca02c" },
            { label: "p99 (µs)", data: rows.map((r) => r.latency && r.latency.p99_ns / 1e3), borderColor: "#d62728" } ] } });
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
        options: { scales: { y: lin("latency", "µs") } } });
    } else if (R.procedure === "frame-loss") {
      chart(section("Frame loss against load"), "fl", {
        type: "line", data: { datasets: rows.map((r, k) => ({
          label: `${r.size} B`, borderColor: ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"][k % 4],
          data: r.steps.map((s) => ({ x: s.load_pct, y: s.frame_loss_pct })) })) },
        options: { scales: { x: lin("load", "% of the highest"), y: lin("frame loss", "%") } } });
    } else if (R.procedure === "back-to-back") {
      chart(section("Longest burst that arrives whole"), "b2b", {
        type: "bar", data: { labels: sizes, datasets: [{ label: "mean burst (frames)", data: rows.map((r) => r.mean),
                                                         backgroundColor: "#1f77b4" }] } });
    }
    const tr = R.trials || [];
    chart(section("Every trial", "The load of each trial in the order run; red: lost frames, grey: invalid."), "trace", {
      type: "scatter",
      data: { datasets: [{ label: "trial load (pps)", data: tr.map((x) => ({ x: x.index + 1, y: x.load_pps || x.offered_pps })),
                           pointBackgroundColor: tr.map((x) => (!x.valid ? "#999" : x.loss_ratio > 0 ? "#d62728" : "#2ca02c")) }] },
      options: { scales: { x: lin("trial"), y: lin("load", "pps") } } });
    const s = section("Trials");
    table(s, ["#", "size", "load pps", "s", "sent", "received", "loss %", "valid", "why"],
          tr.map((x) => [x.index + 1, x.size, fmt(x.load_pps, 0), fmt(x.duration_s), x.sent, x.received,
                         fmt(100 * x.loss_ratio, 5), x.valid ? "yes" : "no: " + x.invalid_reason, x.why]));
  }

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
