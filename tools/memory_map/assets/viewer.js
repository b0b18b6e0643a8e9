/* Memory map viewer: address across, lifetime down, the IR beside.
   Reads PyptoReport.data (see render.py); no network, no storage. */
(function () {
  "use strict";
  var R = window.PyptoReport;
  var D = R.data;
  var esc = R.escape;
  var ROW = 20;
  var state = { fn: 0, scale: "fit", types: false, sel: null };

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function bytes(n) {
    if (n === null || n === undefined) { return "?"; }
    if (n >= 1024 * 1024 && n % 1024 === 0) { return (n / 1048576).toFixed(n % 1048576 ? 2 : 0) + " MiB"; }
    if (n >= 1024) { return (n / 1024).toFixed(n % 1024 ? 2 : 0) + " KiB"; }
    return n + " B";
  }
  function hex(n) { return "0x" + n.toString(16); }
  function pct(a, b) { return b ? " (" + (100 * a / b).toFixed(1) + "%)" : ""; }

  function fn() { return D.functions[state.fn]; }
  function boxById(id) {
    var spaces = fn().spaces;
    for (var i = 0; i < spaces.length; i++) {
      for (var j = 0; j < spaces[i].boxes.length; j++) {
        if (spaces[i].boxes[j].id === id) { return { box: spaces[i].boxes[j], space: spaces[i] }; }
      }
    }
    return null;
  }
  function hue(space, base) {
    var bases = [];
    space.boxes.forEach(function (b) { if (bases.indexOf(b.base) < 0) { bases.push(b.base); } });
    return (200 + bases.indexOf(base) * 67) % 360;
  }

  // ------------------------------------------------------------------ toolbar

  function toolbar() {
    var sel = $("mm-func");
    D.functions.forEach(function (f, i) {
      var o = el("option", null, f.name + " (" + f.type + ")");
      o.value = String(i);
      sel.appendChild(o);
    });
    sel.addEventListener("change", function () { state.fn = Number(sel.value); state.sel = null; draw(); });
    function scale(s) {
      state.scale = s;
      $("mm-scale-fit").setAttribute("aria-pressed", s === "fit" ? "true" : "false");
      $("mm-scale-cap").setAttribute("aria-pressed", s === "cap" ? "true" : "false");
      draw();
    }
    $("mm-scale-fit").addEventListener("click", function () { scale("fit"); });
    $("mm-scale-cap").addEventListener("click", function () { scale("cap"); });
    $("mm-types").addEventListener("click", function () {
      state.types = !state.types;
      $("mm-types").setAttribute("aria-pressed", state.types ? "true" : "false");
      draw();
    });
    var info = $("mm-info");
    info.innerHTML = "<span class=\"mm-mono\">" + esc(D.dump) + "</span> \u00b7 backend " + esc(D.backend) +
      (D.backend_assumed ? " <span class=\"mm-assumed\" title=\"" + esc(D.backend_source) + "\">assumed</span>" : "");
    info.title = "backend from " + D.backend_source;
    document.addEventListener("keydown", function (e) { if (e.key === "Escape") { select(null); } });
  }

  // ------------------------------------------------------------------ drawing

  function scaleMax(s) {
    if (state.scale === "cap" && s.capacity) { return Math.max(s.capacity, s.high_water); }
    return Math.max(s.high_water, s.overflow ? s.capacity || 1 : 1);
  }

  function head(s) {
    var h = el("div", "mm-head");
    var cap = s.capacity === null ? "capacity unknown" : bytes(s.capacity);
    h.innerHTML = "<div class=\"mm-space\">" + esc(s.space) + " <span class=\"mm-cap\">\u00b7 " + esc(cap) + "</span></div>" +
      "<div class=\"mm-stat" + (s.overflow ? " mm-over" : "") + "\" title=\"high-water mark: the highest end address in use\">HWM " +
      bytes(s.high_water) + pct(s.high_water, s.capacity) + (s.overflow ? " exceeds capacity" : "") + "</div>" +
      "<div class=\"mm-stat\">peak " + bytes(s.peak_bytes) + " @ L" + s.peak_line + "</div>" +
      "<div class=\"mm-stat\">" + s.peak_boxes.length + " live at peak \u00b7 " + s.holes.length + " free hole" + (s.holes.length === 1 ? "" : "s") + "</div>";
    var b = el("button", null, "Peak");
    b.type = "button";
    b.title = "Show the tiles live at the peak and the free holes";
    b.setAttribute("data-peak", s.space);
    b.addEventListener("click", function () { select({ peak: s.space }); });
    h.appendChild(b);
    var axis = el("div", "mm-axis");
    var max = scaleMax(s);
    [0, 0.5, 1].forEach(function (f) {
      var t = el("span", null, hex(Math.round(max * f)));
      t.style.left = (f * 100) + "%";
      if (f === 1) { t.style.transform = "translateX(-100%)"; } else if (f > 0) { t.style.transform = "translateX(-50%)"; }
      axis.appendChild(t);
    });
    h.appendChild(axis);
    return h;
  }

  function panel(s, f, rows) {
    var p = el("div", "mm-panel");
    p.style.height = (rows * ROW) + "px";
    p.setAttribute("data-space", s.space);
    var chart = el("div", "mm-chart");
    p.appendChild(chart);
    var max = scaleMax(s);
    function x(a) { return (100 * a / max) + "%"; }
    if (s.capacity && s.capacity <= max) {
      var lim = el("div", "mm-limit");
      lim.style.left = x(s.capacity);
      lim.title = "capacity " + bytes(s.capacity);
      chart.appendChild(lim);
    }
    var hw = el("div", "mm-hwm");
    hw.style.left = x(s.high_water);
    hw.title = "high-water mark " + bytes(s.high_water);
    chart.appendChild(hw);
    var peakTop = (s.peak_line - f.first) * ROW;
    s.holes.forEach(function (h) {
      var d = el("div", "mm-hole");
      d.style.top = (peakTop + 2) + "px";
      d.style.left = x(h[0]);
      d.style.width = "calc(" + x(Math.min(h[1], max) - h[0]) + ")";
      d.title = "free at peak: " + hex(h[0]) + "\u2013" + hex(h[1]) + " (" + bytes(h[1] - h[0]) + ")";
      chart.appendChild(d);
    });
    s.boxes.forEach(function (b) {
      var d = el("div", "mm-box");
      if (b.kind === "view") { d.classList.add("mm-view"); }
      if (b.conflict) { d.classList.add("mm-conflict"); }
      d.setAttribute("data-box", b.id);
      d.setAttribute("role", "button");
      d.tabIndex = 0;
      d.style.setProperty("--h", String(hue(s, b.base)));
      d.style.top = ((b.start - f.first) * ROW + 1) + "px";
      d.style.height = ((b.end - b.start + 1) * ROW - 2) + "px";
      d.style.left = x(b.offset);
      d.style.width = "max(3px, " + x(b.size) + ")";
      var names = b.members.map(function (m) { return m.name; });
      d.title = names.join(" = ") + "\n" + b.base + " @ " + hex(b.offset) + " +" + bytes(b.size) + "\nlines " + b.start + "\u2013" + b.end;
      d.appendChild(document.createTextNode(b.label + (names.length > 1 ? " +" + (names.length - 1) : "")));
      b.members.slice(1).forEach(function (m) {
        var a = el("div", "mm-alias");
        a.style.top = ((m.start - b.start) * ROW) + "px";
        d.appendChild(a);
      });
      d.addEventListener("click", function (e) { e.stopPropagation(); select({ box: b.id }); });
      d.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select({ box: b.id }); } });
      chart.appendChild(d);
    });
    var pk = el("div", "mm-peak");
    pk.style.top = peakTop + "px";
    pk.appendChild(el("span", "mm-peak-tag", "peak " + bytes(s.peak_bytes)));
    chart.appendChild(pk);
    return p;
  }

  function irColumn(f) {
    var col = el("div", "mm-ir");
    var inner = el("div", "mm-ir-inner");
    col.appendChild(inner);
    var src = state.types ? D.lines : D.short_lines;
    for (var ln = f.first; ln <= f.last; ln++) {
      var row = el("div", "mm-line");
      row.setAttribute("data-line", String(ln));
      row.appendChild(el("span", "mm-ln", String(ln)));
      row.appendChild(el("span", "mm-code", src[ln - 1] === undefined ? "" : src[ln - 1]));
      row.addEventListener("click", lineClick(ln));
      inner.appendChild(row);
    }
    return col;
  }

  function lineClick(ln) {
    return function () {
      var f = fn();
      for (var i = 0; i < f.spaces.length; i++) {
        var boxes = f.spaces[i].boxes;
        for (var j = 0; j < boxes.length; j++) {
          var ms = boxes[j].members;
          for (var k = 0; k < ms.length; k++) {
            if (ms[k].def_lines.indexOf(ln) >= 0) { select({ box: boxes[j].id }); return; }
          }
        }
      }
      select(null);
    };
  }

  function draw() {
    var f = fn();
    var grid = $("mm-grid");
    grid.textContent = "";
    grid.style.setProperty("--panels", String(f.spaces.length));
    var rows = f.last - f.first + 1;
    var irHead = el("div", "mm-head mm-head-ir", "IR \u00b7 " + f.name + " \u00b7 lines " + f.first + "\u2013" + f.last);
    grid.appendChild(irHead);
    f.spaces.forEach(function (s) { grid.appendChild(head(s)); });
    grid.appendChild(irColumn(f));
    f.spaces.forEach(function (s) { grid.appendChild(panel(s, f, rows)); });
    select(state.sel);
  }

  // ------------------------------------------------------------------ selection

  function clearMarks() {
    document.querySelectorAll(".mm-line").forEach(function (r) {
      r.classList.remove("mm-hl-def", "mm-hl-use", "mm-hl-alloc", "mm-peak-line");
    });
    document.querySelectorAll(".mm-box").forEach(function (b) { b.classList.remove("mm-sel", "mm-dim"); });
  }
  function mark(lines, cls) {
    lines.forEach(function (ln) {
      var r = document.querySelector(".mm-line[data-line=\"" + ln + "\"]");
      if (r) { r.classList.add(cls); }
    });
  }
  function reveal(first, last) {
    // vertical only: keep the rows first..last in view without moving the panels sideways
    var sc = $("mm-scroll");
    var f = fn();
    var headH = 0;
    var hd = document.querySelector(".mm-head");
    if (hd) { headH = hd.offsetHeight; }
    var top = headH + (first - f.first) * ROW;
    var bottom = headH + (last - f.first + 1) * ROW;
    if (top - headH < sc.scrollTop) { sc.scrollTop = top - headH; }
    else if (bottom > sc.scrollTop + sc.clientHeight) { sc.scrollTop = Math.max(0, bottom - sc.clientHeight); }
  }
  function boxLink(id) {
    var hit = boxById(id);
    var name = hit ? hit.box.label : id;
    return "<button type=\"button\" class=\"mm-link\" data-goto=\"" + esc(id) + "\">" + esc(name) + "</button>";
  }

  function select(sel) {
    state.sel = sel;
    clearMarks();
    var det = $("mm-detail");
    if (sel && sel.box) {
      var hit = boxById(sel.box);
      if (!hit) { state.sel = null; summary(det); return; }
      showBox(det, hit.box, hit.space);
    } else if (sel && sel.peak) {
      var sp = fn().spaces.filter(function (s) { return s.space === sel.peak; })[0];
      if (!sp) { state.sel = null; summary(det); return; }
      showPeak(det, sp);
    } else {
      summary(det);
    }
    det.querySelectorAll("[data-goto]").forEach(function (a) {
      a.addEventListener("click", function () { select({ box: a.getAttribute("data-goto") }); });
    });
  }

  function showBox(det, b, s) {
    var node = document.querySelector(".mm-box[data-box=\"" + b.id + "\"]");
    if (node) { node.classList.add("mm-sel"); }
    var defs = [], uses = [];
    b.members.forEach(function (m) { defs = defs.concat(m.def_lines); uses = uses.concat(m.use_lines); });
    uses = uses.filter(function (ln) { return defs.indexOf(ln) < 0; });
    var alloc = s.allocs[b.base];
    if (alloc !== undefined) { mark([alloc], "mm-hl-alloc"); }
    mark(uses, "mm-hl-use");
    mark(defs, "mm-hl-def");
    reveal(b.start, b.end);
    var kind = b.kind === "view" ? "view of " + boxLink(b.parent) : "tile";
    var h = "<h2>" + esc(s.space) + " \u00b7 " + esc(b.label) + "</h2><table>" +
      "<tr><th>kind</th><td>" + kind + (b.members.length > 1 ? ", " + b.members.length + " aliases" : "") + "</td></tr>" +
      "<tr><th>buffer</th><td><code>" + esc(b.base) + "</code>" + (alloc !== undefined ? " (alloc L" + alloc + ")" : "") + "</td></tr>" +
      "<tr><th>address</th><td><code>" + hex(b.offset) + "\u2013" + hex(b.offset + b.size) + "</code> (" + b.offset + ", " + bytes(b.size) + ")</td></tr>" +
      "<tr><th>lifetime</th><td>lines " + b.start + "\u2013" + b.end + "</td></tr></table>";
    if (b.conflict) {
      h += "<h3 class=\"mm-bad\">Conflict</h3><ul>";
      b.conflicts.forEach(function (id) { h += "<li class=\"mm-bad\">overlaps " + boxLink(id) + " in address and lifetime</li>"; });
      b.notes.forEach(function (n) { h += "<li class=\"mm-bad\">" + esc(n) + "</li>"; });
      h += "</ul>";
    }
    if (b.reuses.length) {
      h += "<h3>Reuses the address of</h3><ul>" + b.reuses.map(function (id) { return "<li>" + boxLink(id) + "</li>"; }).join("") + "</ul>";
    }
    h += "<h3>" + (b.members.length > 1 ? "Aliases (one buffer)" : "Value") + "</h3>";
    b.members.forEach(function (m) {
      h += "<table class=\"mm-member\"><tr><th>name</th><td><code>" + esc(m.name) + "</code></td></tr>" +
        "<tr><th>by</th><td><code>" + esc(m.producer) + "</code> at L" + m.start + "</td></tr>" +
        "<tr><th>type</th><td><code>" + esc(m.dtype) + "[" + m.shape.map(function (d) { return d === null ? "?" : d; }).join(", ") + "]</code></td></tr>" +
        "<tr><th>view</th><td><code>" + esc(m.view) + "</code></td></tr>" +
        "<tr><th>live</th><td>L" + m.start + "\u2013L" + m.end + (m.use_lines.length ? "; used at " + m.use_lines.join(", ") : "; never used") + "</td></tr></table>";
    });
    det.innerHTML = h;
  }

  function showPeak(det, s) {
    mark([s.peak_line], "mm-peak-line");
    var live = s.peak_boxes.map(function (id) { return boxById(id); }).filter(Boolean);
    live.forEach(function (hit) {
      var n = document.querySelector(".mm-box[data-box=\"" + hit.box.id + "\"]");
      if (n) { n.classList.add("mm-sel"); }
    });
    document.querySelectorAll(".mm-panel[data-space=\"" + s.space + "\"] .mm-box:not(.mm-sel)").forEach(function (n) { n.classList.add("mm-dim"); });
    var h = "<h2>" + esc(s.space) + " \u00b7 peak at line " + s.peak_line + "</h2>" +
      "<p>" + bytes(s.peak_bytes) + " live" + pct(s.peak_bytes, s.capacity) + " in " + live.length + " tile" + (live.length === 1 ? "" : "s") + ".</p>" +
      "<h3>Live at the peak</h3><ul>" + live.map(function (hit) {
        return "<li>" + boxLink(hit.box.id) + " <span class=\"mm-mono\">" + hex(hit.box.offset) + " +" + bytes(hit.box.size) + "</span></li>";
      }).join("") + "</ul><h3>Free holes at the peak (fragmentation)</h3><ul>" +
      (s.holes.length ? s.holes.map(function (hl) {
        return "<li class=\"mm-mono\">" + hex(hl[0]) + "\u2013" + hex(hl[1]) + " (" + bytes(hl[1] - hl[0]) + ")</li>";
      }).join("") : "<li>none</li>") + "</ul>";
    det.innerHTML = h;
  }

  function summary(det) {
    var f = fn();
    var h = "<h2>" + esc(f.name) + " <span class=\"mm-cap\">(" + esc(f.type) + ")</span></h2>" +
      "<p>Pass <code>" + esc(D.pass) + "</code>, backend " + esc(D.backend) + (D.backend_assumed ? " <span class=\"mm-assumed\">assumed</span>" : "") +
      ". Click a tile to see its IR lines; click a line to find its tile.</p><table><tr><th>space</th><th>capacity</th><th>HWM</th><th>peak</th></tr>";
    f.spaces.forEach(function (s) {
      h += "<tr><td>" + esc(s.space) + "</td><td>" + bytes(s.capacity) + "</td><td class=\"" + (s.overflow ? "mm-bad" : "") + "\">" +
        bytes(s.high_water) + pct(s.high_water, s.capacity) + "</td><td>" + bytes(s.peak_bytes) + " @ L" + s.peak_line + "</td></tr>";
    });
    h += "</table>";
    var bad = [];
    f.spaces.forEach(function (s) { s.boxes.forEach(function (b) { if (b.conflict) { bad.push(b.id); } }); });
    if (bad.length) {
      h += "<h3 class=\"mm-bad\">Conflicts</h3><ul>" + bad.map(function (id) { return "<li>" + boxLink(id) + "</li>"; }).join("") + "</ul>";
    }
    det.innerHTML = h;
  }

  toolbar();
  draw();
  window.MemoryMap = { state: state, select: select, redraw: draw };
})();
