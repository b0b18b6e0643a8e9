/* Run report: the swimlane (worker / scheduler view, zoom, pan, click for detail and dependencies),
   the dependency graph, the scheduler-overhead findings and the PMU table.
   Reads PyptoReport.data (pypto/runtime/dfx/run_report.py); no network, no storage. */
(function () {
  "use strict";
  var R = window.PyptoReport;
  var D = R.data;
  var esc = R.escape;
  var NS = "http://www.w3.org/2000/svg";
  var LANE = 26, BAR = 18, AXIS = 22, LABEL = 86;
  var byId = {};
  D.tasks.forEach(function (t) { byId[t.id] = t; });
  var coreType = {};
  D.cores.forEach(function (c) { coreType[c.id] = c.type; });
  var pmuOf = {};
  D.pmu.rows.forEach(function (r, i) { (pmuOf[r.task] = pmuOf[r.task] || []).push(i); });
  var END = Math.max(1, D.total_cycles, D.window[1]);
  var state = { view: "worker", t0: 0, t1: END * 1.02, sel: null, mark: null, lanes: [] };

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function svg(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function us(c) { return (c * 1e6 / D.clock_hz).toFixed(3) + " \u00b5s"; }
  function coreName(c) { return (coreType[c] || "core").toUpperCase() + c; }
  function taskName(t) { return t.kernel + (t.block_num > 1 ? "_spmd" : "") + "(" + t.label + ")"; }

  // ------------------------------------------------------------------ swimlane

  // lanes: worker view one per core; scheduler view one per core, a second row where bars overlap
  function lanes() {
    var out = [];
    D.cores.forEach(function (c) {
      if (state.view === "worker") {
        out.push({ core: c.id, name: coreName(c.id), bars: c.bars.map(function (s) {
          return { task: s.task, block: s.block, a: s.start, b: s.end };
        }) });
        return;
      }
      var rows = [];
      c.bars.slice()
        .sort(function (x, y) { return x.dispatch - y.dispatch || x.task - y.task || x.block - y.block; })
        .forEach(function (s) {
          var bar = { task: s.task, block: s.block, a: s.dispatch, b: s.finish };
          for (var i = 0; i < rows.length; i++) {
            if (rows[i].end <= bar.a) { rows[i].bars.push(bar); rows[i].end = bar.b; return; }
          }
          rows.push({ end: bar.b, bars: [bar] });
        });
      rows.forEach(function (r, i) {
        out.push({ core: c.id, name: coreName(c.id) + (i ? "+" + i : ""), bars: r.bars });
      });
    });
    return out;
  }

  function niceStep(span, n) {
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }

  function drawTimeline() {
    var box = $("rr-timeline");
    var width = Math.max(600, box.clientWidth || 900);
    var ls = state.lanes = lanes();
    var height = AXIS + ls.length * LANE + 4;
    var W = width - LABEL - 8;
    var span = Math.max(1e-9, state.t1 - state.t0);
    function x(c) { return LABEL + (c - state.t0) / span * W; }
    box.textContent = "";
    var s = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, id: "rr-swimlane" }, box);
    var defs = svg("defs", {}, s);
    [["in", "rr-arrow-in"], ["out", "rr-arrow-out"]].forEach(function (a) {
      var m = svg("marker", { id: "rr-arrow-" + a[0], viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 7, markerHeight: 7, orient: "auto" }, defs);
      svg("path", { d: "M0,0 L8,4 L0,8 z", "class": a[1] }, m);
    });
    var clip = svg("clipPath", { id: "rr-clip" }, defs);
    svg("rect", { x: LABEL, y: 0, width: W + 8, height: height }, clip);
    ls.forEach(function (l, i) {
      svg("rect", { x: 0, y: AXIS + i * LANE, width: width, height: LANE, "class": "rr-lane-bg" + (i % 2 ? " rr-odd" : "") }, s);
      var t = svg("text", { x: 6, y: AXIS + i * LANE + LANE / 2 + 4, "class": "rr-lane-label" }, s);
      t.textContent = l.name;
    });
    var axis = svg("g", { "class": "rr-axis" }, s);
    var step = Math.max(1, niceStep(span, Math.max(2, Math.floor(W / 110))));  // whole cycles: no 561, 561, 562
    for (var v = Math.ceil(state.t0 / step) * step; v <= state.t1; v += step) {
      var xv = x(v);
      svg("line", { x1: xv, x2: xv, y1: AXIS - 4, y2: height }, axis);
      var tx = svg("text", { x: xv + 2, y: AXIS - 8 }, axis);
      tx.textContent = String(Math.round(v));
    }
    var g = svg("g", { "clip-path": "url(#rr-clip)" }, s);
    if (state.mark) {
      var mi = laneIndexOf(state.mark.core, null);
      if (mi >= 0 && state.view === "worker") {
        svg("rect", { x: x(state.mark.from), y: AXIS + mi * LANE + 1, width: Math.max(2, x(state.mark.to) - x(state.mark.from)),
          height: LANE - 2, "class": "rr-mark", id: "rr-mark" }, g);
      }
    }
    var sel = state.sel === null ? null : byId[state.sel];
    ls.forEach(function (l, i) {
      l.bars.forEach(function (b) {
        var t = byId[b.task];
        var x0 = x(b.a), w = Math.max(1.5, x(b.b) - x0);
        var cls = "rr-bar rr-" + (coreType[l.core] || "aic");
        if (sel && b.task === sel.id) { cls += " rr-sel"; }
        else if (sel && sel.preds.indexOf(b.task) >= 0) { cls += " rr-pred"; }
        else if (sel && sel.succs.indexOf(b.task) >= 0) { cls += " rr-succ"; }
        var r = svg("rect", { x: x0, y: AXIS + i * LANE + (LANE - BAR) / 2, width: w, height: BAR, rx: 2, "class": cls,
          "data-task": t.id, "data-core": l.core }, g);
        var tip = svg("title", {}, r);
        tip.textContent = taskName(t) + " on " + coreName(l.core) + ": " + b.a + " \u2192 " + b.b + " (" + (b.b - b.a) + " cycles)";
        if (w > 40) {
          var lb = svg("text", { x: x0 + 3, y: AXIS + i * LANE + LANE / 2 + 3.5, "class": "rr-bar-label" }, g);
          var txt = taskName(t);
          lb.textContent = txt.length * 6.2 > w - 6 ? t.label : txt;
        }
      });
    });
    if (sel) { drawDeps(g, sel, x); }
    $("rr-info").textContent = (state.view === "worker" ? "start \u2192 end" : "dispatch \u2192 finish") +
      " \u00b7 cycles " + Math.round(state.t0) + "\u2013" + Math.round(state.t1) + " \u00b7 " + D.cores.length +
      " core" + (D.cores.length === 1 ? "" : "s") + " \u00b7 1 cycle = " + (1e9 / D.clock_hz).toFixed(1) + " ns";
  }

  function laneIndexOf(core, task) {
    for (var i = 0; i < state.lanes.length; i++) {
      var l = state.lanes[i];
      if (l.core !== core) { continue; }
      if (task === null) { return i; }
      for (var j = 0; j < l.bars.length; j++) { if (l.bars[j].task === task) { return i; } }
    }
    return -1;
  }

  // a task's anchor on the timeline: its first core's lane, its start (or dispatch) and end (or finish)
  function anchor(t) {
    var c = t.cores[0];
    var i = laneIndexOf(c, t.id);
    var w = state.view === "worker";
    return { y: AXIS + i * LANE + LANE / 2, a: w ? t.start : t.dispatch, b: w ? t.end : t.finish, ok: i >= 0 };
  }

  function drawDeps(g, sel, x) {
    var me = anchor(sel);
    function link(from, to, cls) {
      if (!from.ok || !to.ok) { return; }
      var x1 = x(from.b), x2 = x(to.a), y1 = from.y, y2 = to.y;
      var dx = Math.max(24, Math.abs(x2 - x1) / 2);
      svg("path", { d: "M" + x1 + "," + y1 + " C" + (x1 + dx) + "," + y1 + " " + (x2 - dx) + "," + y2 + " " + x2 + "," + y2,
        "class": "rr-dep " + cls, "marker-end": "url(#rr-arrow-" + (cls === "rr-dep-in" ? "in" : "out") + ")" }, g);
    }
    sel.preds.forEach(function (p) { link(anchor(byId[p]), me, "rr-dep-in"); });
    sel.succs.forEach(function (s) { link(me, anchor(byId[s]), "rr-dep-out"); });
  }

  function zoom(f, at) {
    var span = state.t1 - state.t0;
    var c = at === undefined ? state.t0 + span / 2 : at;
    var ns = Math.min(END * 4, Math.max(4, span / f));
    state.t0 = c - (c - state.t0) * ns / span;
    state.t1 = state.t0 + ns;
    drawTimeline();
  }
  function fit() { state.t0 = 0; state.t1 = END * 1.02; drawTimeline(); }
  function show(t) {  // keep a task in view, centred when it is not
    var a = Math.min(t.dispatch, t.start), b = Math.max(t.finish, t.end);
    if (a < state.t0 || b > state.t1) {
      var span = Math.max(state.t1 - state.t0, (b - a) * 1.5);
      state.t0 = (a + b) / 2 - span / 2;
      state.t1 = state.t0 + span;
    }
  }

  function timelineEvents() {
    var box = $("rr-timeline");
    var drag = null, moved = false;
    function cyc(clientX) {
      var r = box.getBoundingClientRect();
      var W = Math.max(600, box.clientWidth || 900) - LABEL - 8;
      return state.t0 + (clientX - r.left - LABEL) / W * (state.t1 - state.t0);
    }
    box.addEventListener("wheel", function (e) {
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1.25 : 0.8, cyc(e.clientX));
    }, { passive: false });
    box.addEventListener("pointerdown", function (e) {
      drag = { x: e.clientX, t0: state.t0, t1: state.t1 };
      moved = false;
    });
    window.addEventListener("pointermove", function (e) {
      if (!drag) { return; }
      var dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) { moved = true; box.classList.add("rr-dragging"); }
      if (!moved) { return; }
      var W = Math.max(600, box.clientWidth || 900) - LABEL - 8;
      var dt = dx / W * (drag.t1 - drag.t0);
      state.t0 = drag.t0 - dt;
      state.t1 = drag.t1 - dt;
      drawTimeline();
    });
    window.addEventListener("pointerup", function () { drag = null; box.classList.remove("rr-dragging"); });
    box.addEventListener("click", function (e) {
      if (moved) { moved = false; return; }
      var bar = e.target.closest ? e.target.closest("[data-task]") : null;
      select(bar ? Number(bar.getAttribute("data-task")) : null);
    });
    $("rr-zoom-in").addEventListener("click", function () { zoom(1.5); });
    $("rr-zoom-out").addEventListener("click", function () { zoom(1 / 1.5); });
    $("rr-zoom-fit").addEventListener("click", fit);
    function view(v) {
      state.view = v;
      $("rr-view-worker").setAttribute("aria-pressed", v === "worker" ? "true" : "false");
      $("rr-view-sched").setAttribute("aria-pressed", v === "sched" ? "true" : "false");
      drawTimeline();
    }
    $("rr-view-worker").addEventListener("click", function () { view("worker"); });
    $("rr-view-sched").addEventListener("click", function () { view("sched"); });
    window.addEventListener("resize", drawTimeline);
    document.addEventListener("keydown", function (e) { if (e.key === "Escape") { select(null); } });
  }

  // ------------------------------------------------------------------ selection and detail

  function taskLink(id) {
    var b = el("button", "rr-link", byId[id] ? taskName(byId[id]) : "t" + id);
    b.type = "button";
    b.setAttribute("data-goto", String(id));
    return b;
  }

  function select(id, mark) {
    state.sel = id === null || byId[id] === undefined ? null : id;
    state.mark = mark || null;
    if (state.sel !== null) { show(byId[state.sel]); }
    drawTimeline();
    drawDetail();
    highlightGraph();
    highlightRows();
    document.dispatchEvent(new CustomEvent("rr-select", { detail: { task: state.sel } }));  // the in-core view
  }

  function drawDetail() {
    var d = $("rr-detail");
    d.textContent = "";
    if (state.sel === null) {
      d.appendChild(el("h3", null, "Run"));
      var dl0 = el("dl");
      [["target", D.target], ["tasks", D.tasks.length], ["cores used", D.cores.length],
        ["total", D.total_cycles + " cycles (" + us(D.total_cycles) + ")"],
        ["swimlane level", D.swimlane_level.requested + " (recorded " + D.swimlane_level.recorded + ")"],
        ["PMU", D.pmu.event_type ? "event type " + D.pmu.event_type : "off"]].forEach(function (kv) {
        dl0.appendChild(el("dt", null, kv[0]));
        dl0.appendChild(el("dd", null, String(kv[1])));
      });
      d.appendChild(dl0);
      d.appendChild(el("p", "rr-empty", "Click a task (a bar, a graph node, a finding or a PMU row) for its detail."));
      return;
    }
    var t = byId[state.sel];
    d.appendChild(el("h3", null, taskName(t)));
    var dl = el("dl");
    function row(k, v) { dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", null, String(v))); }
    row("kernel", t.kernel);
    if (t.parts.length > 1 || (t.parts.length === 1 && t.parts[0] !== t.kernel)) { row("parts", t.parts.join(", ")); }
    row("core type", t.core_type);
    row("cores", t.cores.map(coreName).join(", "));
    if (t.block_num > 1) {  // an SPMD task: one line per block
      row("SPMD blocks", t.block_num);
      t.blocks.forEach(function (b) {
        row("block " + b.block, b.cores.map(coreName).join(", ") + " \u00b7 dispatch " + b.dispatch + " \u00b7 start " +
          b.start + " \u00b7 end " + b.end + " \u00b7 finish " + b.finish);
      });
    }
    row("cycles", t.cycles + " (" + us(t.cycles) + ")");
    row("dispatch", t.dispatch);
    row("start", t.start);
    row("end", t.end);
    row("finish", t.finish);
    row("head overhead", t.head + " cycles");
    row("tail overhead", t.tail + " cycles");
    d.appendChild(dl);
    function deps(title, ids, other) {
      d.appendChild(el("div", "rr-note", title + " (" + ids.length + ")"));
      var ul = el("ul");
      ids.forEach(function (id) {
        var li = el("li");
        li.appendChild(taskLink(id));
        var e = D.edges.filter(function (x) { return other ? x.pred === t.id && x.succ === id : x.pred === id && x.succ === t.id; })[0];
        if (e && e.kinds.length) { li.appendChild(document.createTextNode(" " + e.kinds.join(", "))); }
        ul.appendChild(li);
      });
      if (ids.length) { d.appendChild(ul); }
    }
    deps("depends on", t.preds, false);
    deps("needed by", t.succs, true);
    var rows = pmuOf[t.id] || [];
    if (D.pmu.event_type) {
      d.appendChild(el("div", "rr-note", "PMU (event type " + D.pmu.event_type + ")"));
      rows.forEach(function (ri) {
        var tb = el("table", "rr-table rr-pmu-detail");
        D.pmu.columns.forEach(function (c, k) {
          var tr = el("tr");
          tr.appendChild(el("th", "rr-l", c));
          tr.appendChild(el("td", null, String(D.pmu.rows[ri].values[k])));
          tb.appendChild(tr);
        });
        d.appendChild(tb);
      });
    }
  }

  // ------------------------------------------------------------------ dependency graph

  var NODE_W = 170, NODE_H = 30, COL = 230, ROW = 42, TOP = 10;
  var nodes = {};

  function layout() {
    var layer = {};
    function depth(id, seen) {
      if (layer[id] !== undefined) { return layer[id]; }
      if (seen[id]) { return 0; }
      seen[id] = true;
      var l = 0;
      byId[id].preds.forEach(function (p) { if (byId[p]) { l = Math.max(l, depth(p, seen) + 1); } });
      layer[id] = l;
      return l;
    }
    D.tasks.forEach(function (t) { depth(t.id, {}); });
    TOP = D.edges.some(function (e) { return layer[e.succ] - layer[e.pred] > 1; }) ? 44 : 10;  // room for the arcs
    var cols = [];
    D.tasks.forEach(function (t) { (cols[layer[t.id]] = cols[layer[t.id]] || []).push(t.id); });
    var pos = {};
    cols.forEach(function (col, li) {
      if (li > 0) {  // barycentre of the predecessors' rows, ties by id
        var key = {};
        col.forEach(function (id) {
          var ps = byId[id].preds.filter(function (p) { return pos[p] !== undefined; });
          key[id] = ps.length ? ps.reduce(function (s, p) { return s + pos[p]; }, 0) / ps.length : 1e9;
        });
        col.sort(function (a, b) { return key[a] - key[b] || a - b; });
      }
      col.forEach(function (id, i) { pos[id] = i; nodes[id] = { x: 10 + li * COL, y: TOP + i * ROW }; });
    });
    var rows = cols.reduce(function (m, c) { return Math.max(m, c.length); }, 0);
    return { w: 20 + Math.max(0, cols.length - 1) * COL + NODE_W, h: TOP + 10 + Math.max(0, rows - 1) * ROW + NODE_H };
  }

  function drawGraph() {
    var box = $("rr-graph");
    if (!D.tasks.length) { box.appendChild(el("p", "rr-empty", "No tasks.")); return; }
    var size = layout();
    var s = svg("svg", { width: size.w, height: size.h, viewBox: "0 0 " + size.w + " " + size.h, id: "rr-depgraph" }, box);
    var defs = svg("defs", {}, s);
    var m = svg("marker", { id: "rr-arrow-edge", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
    svg("path", { d: "M0,0 L8,4 L0,8 z", "class": "rr-arrow-edge" }, m);
    D.edges.forEach(function (e) {
      var a = nodes[e.pred], b = nodes[e.succ];
      if (!a || !b) { return; }
      var x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2, dx = Math.max(20, (x2 - x1) / 2);
      var skip = Math.round((b.x - a.x) / COL) - 1;  // an edge over a layer arcs above the nodes between
      var lift = skip > 0 ? 22 + 6 * Math.min(skip, 4) : 0;
      var p = svg("path", { d: "M" + x1 + "," + y1 + " C" + (x1 + dx) + "," + (y1 - lift * 2) + " " + (x2 - dx) + "," + (y2 - lift * 2) + " " + x2 + "," + y2,
        "class": "rr-edge", "data-pred": e.pred, "data-succ": e.succ, "marker-end": "url(#rr-arrow-edge)" }, s);
      svg("title", {}, p).textContent = "t" + e.pred + " \u2192 t" + e.succ + (e.kinds.length ? " (" + e.kinds.join(", ") + ")" : "");
    });
    D.tasks.forEach(function (t) {
      var n = nodes[t.id];
      var g = svg("g", { "class": "rr-node rr-" + t.core_type, "data-task": t.id, transform: "translate(" + n.x + "," + n.y + ")" }, s);
      svg("rect", { width: NODE_W, height: NODE_H, rx: 5 }, g);
      var label = t.label + " \u00b7 " + t.kernel;
      if (label.length > 22) { label = label.slice(0, 21) + "\u2026"; }
      svg("text", { x: 7, y: 13 }, g).textContent = label;
      svg("text", { x: 7, y: 25 }, g).textContent = t.core_type + " \u00b7 " + t.cycles + " cyc \u00b7 \u2193" + t.preds.length + " \u2191" + t.succs.length;
      svg("title", {}, g).textContent = taskName(t);
    });
    s.addEventListener("click", function (e) {
      var n = e.target.closest ? e.target.closest("[data-task]") : null;
      if (n) { select(Number(n.getAttribute("data-task"))); }
    });
  }

  function highlightGraph() {
    var sel = state.sel === null ? null : byId[state.sel];
    document.querySelectorAll("#rr-depgraph .rr-node").forEach(function (g) {
      var id = Number(g.getAttribute("data-task"));
      g.classList.toggle("rr-sel", !!sel && id === sel.id);
      g.classList.toggle("rr-pred", !!sel && sel.preds.indexOf(id) >= 0);
      g.classList.toggle("rr-succ", !!sel && sel.succs.indexOf(id) >= 0);
    });
    document.querySelectorAll("#rr-depgraph .rr-edge").forEach(function (p) {
      p.classList.toggle("rr-in", !!sel && Number(p.getAttribute("data-succ")) === sel.id);
      p.classList.toggle("rr-out", !!sel && Number(p.getAttribute("data-pred")) === sel.id);
    });
  }

  // ------------------------------------------------------------------ overhead findings

  function drawOverhead() {
    var box = $("rr-overhead");
    box.appendChild(el("p", "rr-note",
      "Per task (runtime-dfx-formats.md \u00a78 items 3/4): head overhead = max(0, min(start \u2212 dispatch, start \u2212 previous end on its core)); " +
      "tail overhead = max(0, finish \u2212 end). Idle gaps: a core waiting between two of its tasks. Click a finding to see it on the swimlane."));
    var sum = el("table", "rr-table rr-summary");
    var ps = ["P10", "P50", "P90", "P99"];
    var hr = el("tr");
    ["", "count", "total", "mean"].concat(ps, ["max"]).forEach(function (h) { hr.appendChild(el("th", h ? null : "rr-l", h)); });
    sum.appendChild(hr);
    [["head", "head overhead"], ["tail", "tail overhead"], ["idle", "idle gaps"]].forEach(function (k) {
      var o = D.overhead[k[0]], tr = el("tr");
      tr.appendChild(el("td", "rr-l", k[1]));
      [o.count, o.total, o.mean].concat(ps.map(function (p) { return o.p[p] === undefined ? "\u2013" : o.p[p]; }), [o.max])
        .forEach(function (v) { tr.appendChild(el("td", null, String(v))); });
      sum.appendChild(tr);
    });
    box.appendChild(sum);
    var wrap = el("div", "rr-findings");
    if (!D.findings.length) {
      wrap.appendChild(el("p", "rr-empty", "No overhead: every task started as dispatched, finished as it ended, and no core waited."));
    } else {
      var tb = el("table", "rr-table");
      tb.id = "rr-findings";
      var h = el("tr");
      ["finding", "task", "core", "from", "to", "cycles", "time"].forEach(function (c, i) { h.appendChild(el("th", i < 3 ? "rr-l" : null, c)); });
      tb.appendChild(h);
      var LIMIT = 500;
      D.findings.slice(0, LIMIT).forEach(function (f, i) {
        var tr = el("tr", "rr-row");
        tr.setAttribute("data-task", String(f.task));
        tr.setAttribute("data-finding", String(i));
        tr.appendChild(el("td", "rr-l", f.kind === "idle" ? "idle gap (before)" : f.kind + " overhead"));
        var td = el("td", "rr-l");
        td.appendChild(taskLink(f.task));
        tr.appendChild(td);
        tr.appendChild(el("td", "rr-l", coreName(f.core)));
        [f.from, f.to, f.cycles, us(f.cycles)].forEach(function (v) { tr.appendChild(el("td", null, String(v))); });
        tb.appendChild(tr);
      });
      wrap.appendChild(tb);
      if (D.findings.length > LIMIT) { wrap.appendChild(el("p", "rr-note", (D.findings.length - LIMIT) + " smaller findings not listed.")); }
      tb.addEventListener("click", function (e) {
        var tr = e.target.closest("tr[data-finding]");
        if (!tr) { return; }
        var f = D.findings[Number(tr.getAttribute("data-finding"))];
        if (state.view !== "worker") { $("rr-view-worker").click(); }
        select(f.task, f);
        $("rr-swimlane-section").scrollIntoView({ block: "nearest" });
      });
    }
    box.appendChild(wrap);
    if (D.sched) { drawSched(box, D.sched); return; }
    var l3 = el("div", "rr-level3");
    l3.id = "rr-level3";
    l3.appendChild(el("div", null, "This run recorded swimlane level " + D.swimlane_level.recorded +
      " (asked for " + D.swimlane_level.requested + "). " +
      "These \u00a78 analyses read the level-3 scheduler phases and are not in this page yet:"));
    var ul = el("ul");
    D.level3.forEach(function (a) { ul.appendChild(el("li", null, "\u00a78." + a.item + " " + a.name + " \u2014 needs " + a.needs)); });
    l3.appendChild(ul);
    box.appendChild(l3);
  }

  // ------------------------------------------------------------------ §8 analyses (level >= 3)

  function f3(x) { return Number(x).toFixed(3); }
  function pc(x) { return Number(x).toFixed(1) + "%"; }
  function table(id, head, rows, left) {  // rows: arrays of cells (strings or nodes)
    var tb = el("table", "rr-table");
    if (id) { tb.id = id; }
    var h = el("tr");
    head.forEach(function (c, i) { h.appendChild(el("th", i < left ? "rr-l" : null, c)); });
    tb.appendChild(h);
    rows.forEach(function (r) {
      var tr = el("tr");
      r.forEach(function (v, i) {
        var td = el("td", i < left ? "rr-l" : null);
        if (typeof v === "object") { td.appendChild(v); } else { td.textContent = String(v); }
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    return tb;
  }

  function drawSched(box, S) {
    var sec = el("div", "rr-sched");
    sec.id = "rr-sched";
    var mk = S.window.makespan_us;
    function share(v) { return mk ? pc(100 * v / mk) : "0.0%"; }
    sec.appendChild(el("h3", "rr-h3", "Scheduler analyses (runtime-dfx-formats.md \u00a78, swimlane level " +
      D.swimlane_level.recorded + ")"));
    sec.appendChild(el("p", "rr-note", "Window: makespan " + f3(mk) + " \u00b5s (first start \u2192 last end), " +
      S.window.tasks + " tasks, " + S.window.rows + " core rows, " + S.window.edges + " dependency pairs. Times in \u00b5s."));

    var o = S.overhead;
    sec.appendChild(el("h4", "rr-h4", "1. Overhead per engine (an idle core and a ready, undispatched task)"));
    var rows = o.engines.map(function (e) { return [e.engine, e.cores, f3(e.overhead_us), pc(e.share)]; });
    rows.push(["all_overhead", "", f3(o.all_overhead_us), pc(o.all_overhead)]);
    rows.push(["has_overhead", "", f3(o.has_overhead_us), pc(o.has_overhead)]);
    sec.appendChild(table("rr-sched-engines", ["engine", "cores", "overhead", "of makespan"], rows, 1));
    var v = el("p", "rr-verdict rr-verdict-" + o.verdict.replace(/[^a-z]+/g, "-"), "Verdict: " + o.verdict);
    v.id = "rr-verdict";
    sec.appendChild(v);
    sec.appendChild(el("p", "rr-note", "On has_overhead: \u2265 25% scheduler-bound, \u2265 8% partial, else not."));

    sec.appendChild(el("h4", "rr-h4", "2. AICore switch gaps (prev_end \u2192 start of a task dispatched before prev_end)"));
    sec.appendChild(table("rr-sched-switch", ["core", "n", "min", "mean", "max", "total", "in overhead", "independent"],
      S.switch.cores.map(function (c) {
        return [coreName(c.core), c.count, f3(c.min_us), f3(c.mean_us), f3(c.max_us), f3(c.total_us), f3(c.overhead_us), f3(c.independent_us)];
      }), 1));
    var b = S.switch.bound_us;
    sec.appendChild(el("p", "rr-note", "Makespan bound: [" + f3(b[0]) + ", " + f3(b[1]) + "] \u00b5s (" + share(b[0]) + " \u2026 " + share(b[1]) + " of the makespan)."));

    sec.appendChild(el("h4", "rr-h4", "3/4. Head and tail overhead per core row (linear-interpolated percentiles)"));
    var ks = ["P10", "P25", "P50", "P75", "P90", "P95", "P99", "Max", "Mean", "Total"];
    sec.appendChild(table("rr-sched-headtail", [""].concat(ks, ["of makespan"]),
      [["head", S.head], ["tail", S.tail]].map(function (r) {
        return [r[0]].concat(ks.map(function (k) { return f3(r[1][k]); }), [share(r[1].Total)]);
      }), 1));

    sec.appendChild(el("h4", "rr-h4", "5. Scheduler threads"));
    sec.appendChild(table("rr-sched-threads", ["thread", "tasks", "loops", "ns/loop", "complete", "async_poll", "dispatch", "idle", "pop hit", "fanout mean/max", "fanin mean/max"],
      S.threads.map(function (t, i) {
        return [i, t.tasks, t.loops, Number(t.ns_per_loop).toFixed(1), f3(t.complete_us), f3(t.async_poll_us), f3(t.dispatch_us), f3(t.idle_us),
          pc(t.pop_hit_rate) + " (" + t.pop_hit + "/" + (t.pop_hit + t.pop_miss) + ")",
          Number(t.fanout_mean).toFixed(2) + "/" + t.fanout_max, Number(t.fanin_mean).toFixed(2) + "/" + t.fanin_max];
      }), 1));

    var c = S.critical_path;
    sec.appendChild(el("h4", "rr-h4", "6. Critical path (latest finish back through the latest-ending producer)"));
    var tb = table("rr-critical", ["#", "task", "dispatch", "start", "end", "finish"], c.task_ids.map(function (id, i) {
      var t = byId[id];
      return [i + 1, taskLink(id)].concat(t ? [t.dispatch, t.start, t.end, t.finish] : ["", "", "", ""]);
    }), 2);
    Array.prototype.slice.call(tb.querySelectorAll("tr")).slice(1).forEach(function (tr, i) {
      tr.className = "rr-row";
      tr.setAttribute("data-task", String(c.task_ids[i]));
    });
    tb.addEventListener("click", function (e) {
      var tr = e.target.closest("tr[data-task]");
      if (!tr) { return; }
      select(Number(tr.getAttribute("data-task")));
      $("rr-swimlane-section").scrollIntoView({ block: "nearest" });
    });
    sec.appendChild(tb);
    sec.appendChild(table("rr-critical-split", ["", "\u00b5s", "of makespan", "of the path's span"],
      ["sched", "exec", "other"].map(function (k) {
        return [k, f3(c[k + "_us"]), pc(c[k]), c.span_us ? pc(100 * c[k + "_us"] / c.span_us) : "0.0%"];
      }).concat([["span", f3(c.span_us), share(c.span_us), ""]]), 1));
    box.appendChild(sec);
  }

  // ------------------------------------------------------------------ PMU

  function drawPmu() {
    var box = $("rr-pmu");
    if (!D.pmu.event_type) {
      box.appendChild(el("p", "rr-empty", "PMU collection was off for this run (RunConfig(enable_pmu=N) writes pmu.csv and fills this table)."));
      return;
    }
    box.appendChild(el("p", "rr-note", "pmu.csv, event type " + D.pmu.event_type + ": one row per task part (per core a task used). Click a row for its task."));
    var tb = el("table", "rr-table");
    tb.id = "rr-pmu-table";
    var h = el("tr");
    h.appendChild(el("th", "rr-l", "task"));
    D.pmu.columns.forEach(function (c) { h.appendChild(el("th", null, c)); });
    tb.appendChild(h);
    D.pmu.rows.forEach(function (r) {
      var tr = el("tr", "rr-row");
      tr.setAttribute("data-task", String(r.task));
      var td = el("td", "rr-l");
      td.appendChild(taskLink(r.task));
      tr.appendChild(td);
      r.values.forEach(function (v) { tr.appendChild(el("td", null, String(v))); });
      tb.appendChild(tr);
    });
    tb.addEventListener("click", function (e) {
      var tr = e.target.closest("tr[data-task]");
      if (tr) { select(Number(tr.getAttribute("data-task"))); }
    });
    box.appendChild(tb);
  }

  function highlightRows() {
    document.querySelectorAll("#rr-pmu-table tr.rr-row, #rr-findings tr.rr-row, #rr-critical tr.rr-row").forEach(function (tr) {
      tr.classList.toggle("rr-sel", state.sel !== null && Number(tr.getAttribute("data-task")) === state.sel);
    });
  }

  // ------------------------------------------------------------------ start

  document.addEventListener("click", function (e) {  // a task link anywhere (detail, tables) selects it
    var a = e.target.closest ? e.target.closest("[data-goto]") : null;
    if (!a) { return; }
    e.stopPropagation();
    select(Number(a.getAttribute("data-goto")));
    $("rr-swimlane-section").scrollIntoView({ block: "nearest" });
  }, true);
  timelineEvents();
  drawOverhead();
  drawGraph();
  drawPmu();
  select(null);
  window.RunReport = { state: state, select: select, zoom: zoom, fit: fit, el: el, svg: svg };  // el/svg: the in-core view's too
})();
