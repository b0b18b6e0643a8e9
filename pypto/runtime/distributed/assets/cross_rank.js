/* Cross-rank view: one lane pair per rank (its events, and what landed on it from peers), on the
   common clock, with an arrow for every transfer, signal, put and get between ranks.
   Reads PyptoReport.data (pypto/runtime/distributed/report.py), or its "cross_rank" key inside the run
   report (pypto/runtime/dfx/run_report.py: the "Cross-rank trace" section); no network, no storage. */
(function () {
  "use strict";
  var D = window.PyptoReport.data;
  if (D.cross_rank !== undefined) {  // inside the run report
    if (!D.cross_rank) { return; }
    D = D.cross_rank;
    document.getElementById("rr-xr-section").hidden = false;
  }
  var NS = "http://www.w3.org/2000/svg";
  var LANE = 22, LABEL = 120, AXIS = 20, W = 1200;
  var COLORS = { send: "#4e79a7", recv: "#59a14f", notify: "#f28e2b", wait: "#bab0ac", put: "#b07aa1",
    get: "#76b7b2", compute: "#9c755f", chip: "#edc948", arrival: "#e15759" };
  var END = Math.max(1, D.total_cycles);
  function svg(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function x(c) { return LABEL + (W - LABEL - 10) * c / END; }
  function laneY(rank, row) { return AXIS + (rank * 2 + row) * LANE; }
  var detail = document.getElementById("xr-detail");
  var selected = null;
  function select(node, text) {
    if (selected) { selected.classList.remove("xr-sel"); }
    selected = node;
    node.classList.add("xr-sel");
    detail.textContent = text;
  }
  var legend = document.getElementById("xr-legend");
  Object.keys(COLORS).forEach(function (k) {
    var s = document.createElement("span");
    s.style.setProperty("--swatch", COLORS[k]);
    s.textContent = k;
    legend.appendChild(s);
  });
  var H = AXIS + D.ranks.length * 2 * LANE + 8;
  var root = svg("svg", { viewBox: "0 0 " + W + " " + H, id: "xr-svg" });
  document.getElementById("xr-lanes").appendChild(root);
  for (var i = 0; i <= 4; i++) {
    var c = Math.round(END * i / 4);
    svg("text", { x: x(c), y: 12, "text-anchor": i ? (i === 4 ? "end" : "middle") : "start" }, root).textContent =
      c + " cyc";
  }
  D.ranks.forEach(function (r) {
    [0, 1].forEach(function (row) {
      var label = svg("text", { x: 4, y: laneY(r.rank, row) + 15, "class": "xr-label" }, root);
      label.textContent = row ? "  arrivals" : "rank " + r.rank + " (d" + r.device_id + ")";
    });
    r.slices.forEach(function (s) {
      var rect = svg("rect", { x: x(s.start), y: laneY(r.rank, s.row) + 3, width: Math.max(1.5, x(s.end) - x(s.start)),
        height: LANE - 6, fill: COLORS[s.cat] || "#888", "class": "xr-slice", "data-rank": r.rank }, root);
      svg("title", {}, rect).textContent = s.name;
      rect.addEventListener("click", function () {
        select(rect, "rank " + r.rank + "  " + s.name + "\n" + s.cat + "  cycles " + s.start + " -> " + s.end +
          (s.task ? "\ntask " + s.task : ""));
      });
    });
  });
  D.flows.forEach(function (f) {
    var x1 = x(f.src.t), y1 = laneY(f.src.rank, f.src.row) + LANE / 2;
    var x2 = x(f.dst.t), y2 = laneY(f.dst.rank, f.dst.row) + LANE / 2;
    var mid = (y1 + y2) / 2;
    var path = svg("path", { d: "M" + x1 + "," + y1 + " C" + x1 + "," + mid + " " + x2 + "," + mid + " " + x2 + "," + y2,
      "class": "xr-flow", "data-id": f.id }, root);
    path.addEventListener("click", function () {
      select(path, f.id + ": rank " + f.src.rank + " @" + f.src.t + " -> rank " + f.dst.rank + " @" + f.dst.t);
    });
  });
  document.body.setAttribute("data-ready", "1");
})();
