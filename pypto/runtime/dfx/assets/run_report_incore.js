/* Run report: the in-core view. Selecting a task (the swimlane's "rr-select" event) draws, per part of
   the task, its kernel's pipe lanes: one row per (sub-)lane in dataflow order, a bar per instruction
   (critical chain outlined), the set_flag -> wait_flag arrows, and the bottleneck line.
   Reads PyptoReport.data.incore (pypto/runtime/dfx/incore_view.py); no network, no storage. */
(function () {
  "use strict";
  var R = window.PyptoReport;
  var IC = R.data.incore || { enabled: false, parts: [] };
  var LANE = 20, BAR = 14, AXIS = 18, LABEL = 78;
  var box = document.getElementById("rr-incore");

  var el = window.RunReport.el, svg = window.RunReport.svg;  // run_report.js's DOM helpers (loaded first)
  function pipeOf(lane) { return lane.split("#")[0]; }

  function drawPart(p, n) {
    var wrap = el("div", "rr-ic-part");
    wrap.setAttribute("data-task", String(p.task));
    var ratio = p.ratio === null ? "" : " \u00b7 kernel / bound = " + Number(p.ratio).toFixed(3) + "x";
    wrap.appendChild(el("div", "rr-ic-head", p.kernel + " on " + p.core + ": " + p.cycles + " cycles \u00b7 per-pipe bound " +
      (p.bound.pipe ? p.bound.cycles + " (" + p.bound.pipe + ")" : "\u2013") + ratio));
    wrap.appendChild(el("div", "rr-note", p.pipes.map(function (q) {
      return q.pipe + " " + q.busy + " (" + (100 * q.share).toFixed(1) + "%)";
    }).join(" \u00b7 ") + (p.truncated ? " \u00b7 " + p.truncated + " later instructions not drawn" : "")));
    var width = Math.max(600, (box.clientWidth || 900) - 4);
    var W = width - LABEL - 10;
    var span = Math.max(1, p.cycles);
    function x(c) { return LABEL + c / span * W; }
    var height = AXIS + p.lanes.length * LANE + 4;
    var s = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, "class": "rr-ic-svg",
      id: "rr-incore-" + p.task + "-" + n }, wrap);
    var defs = svg("defs", {}, s);
    var m = svg("marker", { id: "rr-ic-arrow-" + p.task + "-" + n, viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
    svg("path", { d: "M0,0 L8,4 L0,8 z", "class": "rr-ic-arrowhead" }, m);
    p.lanes.forEach(function (name, i) {
      svg("rect", { x: 0, y: AXIS + i * LANE, width: width, height: LANE, "class": "rr-lane-bg" + (i % 2 ? " rr-odd" : "") }, s);
      var t = svg("text", { x: 6, y: AXIS + i * LANE + LANE / 2 + 4, "class": "rr-lane-label rr-ic-lane", "data-lane": name }, s);
      t.textContent = name;
    });
    var axis = svg("g", { "class": "rr-axis" }, s);
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      var v = Math.round(f * span), xv = x(v);
      svg("line", { x1: xv, x2: xv, y1: AXIS - 4, y2: height }, axis);
      svg("text", { x: Math.min(xv + 2, width - 40), y: AXIS - 6 }, axis).textContent = String(v);
    });
    var chain = {};
    p.chain.forEach(function (i) { chain[i] = true; });
    var info = el("div", "rr-note rr-ic-info", "Hover or click an instruction for its op, cycles and source line.");
    var g = svg("g", {}, s);
    p.instrs.forEach(function (ins, i) {
      var lane = p.lanes[ins[0]];
      var x0 = x(ins[1]), w = Math.max(1, x(ins[2]) - x0);
      var r = svg("rect", { x: x0, y: AXIS + ins[0] * LANE + (LANE - BAR) / 2, width: w, height: BAR,
        "class": "rr-ic-bar rr-ic-" + pipeOf(lane) + (chain[i] ? " rr-ic-chain" : ""), "data-i": i, "data-lane": lane }, g);
      svg("title", {}, r).textContent = describe(p, ins);
    });
    p.flows.forEach(function (f) {
      var a = p.instrs[f[0]], b = p.instrs[f[1]];
      var x1 = x(a[2]), y1 = AXIS + a[0] * LANE + LANE / 2, x2 = x(b[1]), y2 = AXIS + b[0] * LANE + LANE / 2;
      svg("path", { d: "M" + x1 + "," + y1 + " L" + x2 + "," + y2, "class": "rr-ic-flow", "data-from": f[0], "data-to": f[1],
        "marker-end": "url(#rr-ic-arrow-" + p.task + "-" + n + ")" }, g);
    });
    s.addEventListener("click", function (e) {
      var b = e.target.closest ? e.target.closest("[data-i]") : null;
      if (b) { info.textContent = describe(p, p.instrs[Number(b.getAttribute("data-i"))]); }
    });
    wrap.appendChild(info);
    return wrap;
  }

  function describe(p, ins) {
    var loc = ins[4] >= 0 ? p.locs[ins[4]] : "no DSL location";
    return p.ops[ins[3]] + " on " + p.lanes[ins[0]] + ": " + ins[1] + " \u2192 " + ins[2] + " (" + (ins[2] - ins[1]) +
      " cycles) \u00b7 " + loc + (ins[5] ? " \u00b7 .pto line " + ins[5] : "");
  }

  function draw(task) {
    box.textContent = "";
    if (!IC.enabled) {
      box.appendChild(el("p", "rr-empty", "The in-core trace was off for this run (RunConfig(enable_incore_trace=True) draws each task's pipe lanes here)."));
      return;
    }
    var parts = IC.parts.filter(function (p) { return p.task === task; });
    if (task === null || task === undefined || !parts.length) {
      box.appendChild(el("p", "rr-empty", "Click a task in the swimlane to open its kernel's pipe lanes."));
      return;
    }
    box.appendChild(el("p", "rr-note", "Cycles from the kernel's start; one row per pipe in dataflow order (MTE2#1: a second row where a pipe's instructions overlap); " +
      "arrows: set_flag \u2192 wait_flag, from the producing to the consuming instruction; outlined: the critical chain. " +
      "dfx_outputs/incore/<task>_<kernel>/trace.clean.json opens the same lanes in Perfetto."));
    parts.forEach(function (p, n) { box.appendChild(drawPart(p, n)); });
  }

  document.addEventListener("rr-select", function (e) { draw(e.detail.task); });
  draw(null);
  window.RunReportIncore = { draw: draw, data: IC };
})();
