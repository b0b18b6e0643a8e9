/* pypto-ir-trace viewer: presentation only; every diff is precomputed. */
(function () {
  "use strict";
  var R = window.PyptoReport, D = R.data, P = D.passes, esc = R.escape;
  var EQ = 0, DEL = 1, INS = 2, REP = 3, SOLO = 4;
  var BR = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;
  var ODD = /[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;
  var BR_END = /(?:\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])$/;
  var $ = function (id) { return document.getElementById(id); };

  var state = {
    current: -1,
    fn: "",            /* preferred function key ("" = whole file) */
    layout: "side",
    mode: "context",   /* context | all | none */
    expanded: {},      /* fold start row -> true, for the current view */
    showChanged: true,
    showNoop: false,
    lens: null         /* DSL line indices followed by the source-line lens, or null */
  };
  var L = D.lens, lensSet = {}, paintSpec = { a: [], b: [] };

  /* ---- data helpers ---------------------------------------------------- */

  var lineCache = [];
  function splitLines(t) {
    if (!t) { return []; }
    var parts = ODD.test(t) ? t.split(BR) : t.split("\n");
    if (BR_END.test(t)) { parts.pop(); }
    return parts;
  }
  function lines(ti) {
    if (!lineCache[ti]) { lineCache[ti] = splitLines(D.texts[ti]); }
    return lineCache[ti];
  }
  var widthCache = typeof WeakMap === "function" ? new WeakMap() : null;
  function widest(ls) {
    if (widthCache && widthCache.has(ls)) { return widthCache.get(ls); }
    var w = 0;
    for (var k = 0; k < ls.length; k++) { if (ls[k].length > w) { w = ls[k].length; } }
    if (widthCache) { widthCache.set(ls, w); }
    return w;
  }
  /* Split every snapshot while idle, so first visits stay fast. */
  function warm(next) {
    if (next >= D.texts.length) { return; }
    var idle = window.requestIdleCallback || function (f) { return setTimeout(f, 1); };
    idle(function () { widest(lines(next)); warm(next + 1); });
  }
  function fnRange(ti, key) {
    var fs = D.functions[ti];
    if (!fs) { return null; }
    for (var k = 0; k < fs.length; k++) { if (fs[k][0] === key) { return fs[k]; } }
    return null;
  }
  function prevText(i) { return i > 0 ? P[i - 1].text : null; }
  function fnSafe(i) {
    var p = P[i];
    if (D.functions[p.text] === null) { return false; }
    return i === 0 || (p.funcs !== null && D.functions[prevText(i)] !== null);
  }
  function fnPresent(i, key) {
    return !!(fnRange(P[i].text, key) || (i > 0 && fnRange(prevText(i), key)));
  }
  function effectiveFn(i) {
    return state.fn && fnSafe(i) && fnPresent(i, state.fn) ? state.fn : "";
  }

  /* ---- syntax highlighting: runs of each distinct line, painted when shown ---- */

  var hlIndex = null;
  function runsOf(line) {
    if (!D.hl) { return null; }
    if (!hlIndex) {  /* distinct lines in order of first appearance, as the payload lists them */
      hlIndex = new Map();
      for (var t = 0; t < D.texts.length; t++) {
        var ls = lines(t);
        for (var k = 0; k < ls.length; k++) { if (!hlIndex.has(ls[k])) { hlIndex.set(ls[k], hlIndex.size); } }
      }
    }
    var n = hlIndex.get(line);
    return n === undefined ? null : D.hl.runs[n];
  }
  var RUN = /([A-Z_])(\d+)/g;
  /* HTML of a line: class spans from the runs, <mark>s from the flat [start, end, ...] marks. */
  function paint(line, runs, marks, mcls) {
    if (!runs) { return marks ? code(line, marks, mcls) : esc(line); }
    var cuts = [], m, pos = 0, k;
    RUN.lastIndex = 0;
    while ((m = RUN.exec(runs)) !== null) { cuts.push([pos, pos + +m[2], m[1]]); pos += +m[2]; }
    if (pos < line.length) { cuts.push([pos, line.length, "_"]); }
    var bounds = {}, list = [];
    for (k = 0; k < cuts.length; k++) { bounds[cuts[k][0]] = 1; }
    if (marks) { for (k = 0; k < marks.length; k++) { bounds[marks[k]] = 1; } }
    bounds[line.length] = 1;
    for (var b in bounds) { if (+b <= line.length) { list.push(+b); } }
    list.sort(function (x, y) { return x - y; });
    var out = "", ci = 0, mi = 0, inMark = false;
    for (k = 0; k + 1 < list.length; k++) {
      var a = list[k], e = list[k + 1];
      if (a === e) { continue; }
      while (ci < cuts.length && cuts[ci][1] <= a) { ci++; }
      var cls = ci < cuts.length && cuts[ci][0] <= a ? cuts[ci][2] : "_";
      var marked = false;
      if (marks) { while (mi < marks.length && marks[mi + 1] <= a) { mi += 2; } marked = mi < marks.length && marks[mi] <= a; }
      if (marked !== inMark) { out += marked ? '<mark class="' + mcls + '">' : "</mark>"; inMark = marked; }
      var txt = esc(line.slice(a, e));
      out += cls === "_" ? txt : '<span class="h' + cls + '">' + txt + "</span>";
    }
    return out + (inMark ? "</mark>" : "");
  }
  var ROW_H = 19;
  /* Paint the rows of both panes that are in (or near) the viewport. */
  function paintVisible() {
    ["a", "b"].forEach(function (side) {
      var sc = $("irt-scroll-" + side), canvas = $("irt-canvas-" + side), spec = paintSpec[side];
      var first = Math.max(0, Math.floor(sc.scrollTop / ROW_H) - 20);
      var last = Math.min(spec.length, first + Math.ceil(sc.clientHeight / ROW_H) + 40);
      for (var r = first; r < last; r++) {
        var sp = spec[r];
        if (!sp) { continue; }
        spec[r] = null;
        var el = canvas.children[r];
        if (el && el.lastChild) { el.lastChild.innerHTML = paint(sp[0], runsOf(sp[0]), sp[1], sp[2]); }
      }
    });
  }
  var paintQueued = false;
  function queuePaint() {
    if (paintQueued) { return; }
    paintQueued = true;
    requestAnimationFrame(function () { paintQueued = false; paintVisible(); });
  }

  /* ---- the source-line lens: DSL lines per dump line ------------------------ */

  var lensMaps = [];
  function lensIds(ti, ln) {
    if (!L || ti === null || !L.maps[ti]) { return null; }
    if (!lensMaps[ti]) {
      lensMaps[ti] = L.maps[ti].split(";").map(function (x) { return x ? x.split(".").map(Number) : []; });
    }
    return lensMaps[ti][ln] || null;
  }
  function hit(ti, ln) {
    if (!state.lens) { return false; }
    var ids = lensIds(ti, ln);
    if (!ids) { return false; }
    for (var k = 0; k < ids.length; k++) { if (lensSet[ids[k]]) { return true; } }
    return false;
  }
  var hitCache = {};
  /* The lens lines of text ti, joined: two snapshots differ on the lens iff these differ. */
  function hitText(ti) {
    if (hitCache[ti] === undefined) {
      var ls = lines(ti), out = [];
      for (var k = 0; k < ls.length; k++) { if (hit(ti, k)) { out.push(ls[k]); } }
      hitCache[ti] = out.join("\n");
    }
    return hitCache[ti];
  }
  function touched(i) { return i > 0 && !!state.lens && hitText(P[i].text) !== hitText(P[i - 1].text); }
  function lensLabel(ids) { return ids.map(function (d) { return L.dsl[d]; }).join(", "); }

  /* Status of pass i for the scope (whole file or the preferred function). */
  function info(i) {
    var p = P[i];
    if (i === 0) { return { status: "input", ins: 0, del: 0, approx: false }; }
    var key = state.fn, d = p.diff, approx = false;
    if (key) {
      if (!fnSafe(i)) {
        approx = true;
      } else if (!fnPresent(i, key)) {
        return { status: "absent", ins: 0, del: 0, approx: false };
      } else {
        d = p.funcs[key] || { ins: 0, del: 0 };
      }
    }
    return { status: d.ins || d.del ? "changed" : "noop", ins: d.ins, del: d.del, approx: approx };
  }
  function visible(i) {
    var s = info(i).status;
    if (s === "input") { return true; }
    return s === "changed" ? state.showChanged : state.showNoop;
  }

  /* ---- sidebar --------------------------------------------------------- */

  var items = [];
  function buildList() {
    var list = $("irt-list"), html = [];
    for (var i = 0; i < P.length; i++) {
      var p = P[i], badges = "";
      if (p.warning !== null) { badges += '<span class="irt-badge irt-warn-badge" title="Warnings: ' + esc(p.warningFile) + '">\u26A0</span>'; }
      if (p.verdict) {
        var v = p.verdict.status;
        badges += '<span class="irt-badge irt-verdict irt-v-' + v + '" title="Validation: ' + v + '">' +
          (v === "pass" ? "\u2713" : v === "fail" ? "\u2717" : "!") + "</span>";
      }
      if (D.firstDiverging === p.index) { badges += '<span class="irt-badge irt-diverge" title="First diverging pass">first divergence</span>'; }
      html.push('<li data-index="' + i + '"><button type="button" class="irt-pass" data-index="' + i + '">' +
        '<span class="irt-idx">' + String(p.index).padStart(2, "0") + "</span>" +
        '<span class="irt-name" title="' + esc(p.file) + '">' + esc(p.name) + "</span>" +
        badges + '<span class="irt-lens-mark" title="Touched the lens line">\u25C6</span><span class="irt-counts"></span><span class="irt-dot"></span></button></li>');
    }
    list.innerHTML = html.join("");
    items = Array.prototype.slice.call(list.children);
    list.addEventListener("click", function (e) {
      var b = e.target.closest(".irt-pass");
      if (b) { select(+b.getAttribute("data-index")); }
    });
  }

  function refreshList() {
    var changed = 0, noop = 0;
    for (var i = 0; i < P.length; i++) {
      var inf = info(i), li = items[i];
      li.className = "irt-item irt-s-" + inf.status + (inf.approx ? " irt-approx" : "") + (touched(i) ? " irt-touched" : "");
      li.hidden = !visible(i);
      var c = li.querySelector(".irt-counts");
      if (inf.status === "input") { c.innerHTML = '<span class="irt-tag">input</span>'; }
      else if (inf.status === "absent") { c.innerHTML = '<span class="irt-tag">absent</span>'; }
      else { c.innerHTML = '<span class="irt-ins">+' + inf.ins + '</span> <span class="irt-del">\u2212' + inf.del + "</span>"; }
      if (inf.status === "changed") { changed++; } else if (inf.status !== "input") { noop++; }
    }
    $("irt-fc-changed").textContent = changed;
    $("irt-fc-noop").textContent = noop;
    $("irt-f-changed").setAttribute("aria-pressed", state.showChanged ? "true" : "false");
    $("irt-f-noop").setAttribute("aria-pressed", state.showNoop ? "true" : "false");
    $("irt-summary").textContent = (P.length - 1) + " passes \u00B7 " + changed + " changed" +
      (state.fn ? " (in " + (D.labels[state.fn] || state.fn) + ")" : "");
    var scope = $("irt-scope");
    if (state.fn) {
      scope.innerHTML = 'Scope: <code>' + esc(D.labels[state.fn] || state.fn) + '</code> <button type="button" id="irt-scope-clear" title="Back to Whole file">Whole file</button>';
      $("irt-scope-clear").addEventListener("click", function () { setFn(""); });
    } else {
      scope.textContent = "";
    }
  }

  function visibleList() {
    var out = [];
    for (var i = 0; i < P.length; i++) { if (!items[i].hidden) { out.push(i); } }
    return out;
  }

  function ensureVisibleSelection() {
    if (state.current >= 0 && !items[state.current].hidden) { return; }
    var vis = visibleList(), best = -1;
    for (var k = 0; k < vis.length; k++) {
      if (best < 0 || Math.abs(vis[k] - state.current) < Math.abs(best - state.current)) { best = vis[k]; }
    }
    if (best >= 0) { select(best); }
  }

  function move(step) {
    var vis = visibleList();
    if (!vis.length) { return; }
    var pos = vis.indexOf(state.current);
    var next = pos < 0 ? vis[0] : vis[Math.max(0, Math.min(vis.length - 1, pos + step))];
    if (next !== state.current) { select(next); }
  }

  /* ---- the diff view --------------------------------------------------- */

  function viewOf(i) {
    var p = P[i], key = effectiveFn(i), b = lines(p.text), a = i > 0 ? lines(prevText(i)) : [];
    var aOff = 0, bOff = 0, ops;
    if (key) {
      var ra = i > 0 ? fnRange(prevText(i), key) : null, rb = fnRange(p.text, key);
      a = ra ? a.slice(ra[1], ra[2]) : [];
      b = rb ? b.slice(rb[1], rb[2]) : [];
      aOff = ra ? ra[1] : 0;
      bOff = rb ? rb[1] : 0;
      if (i === 0) { ops = [[SOLO, b.length]]; }
      else { ops = p.funcs[key] ? p.funcs[key].ops : [[EQ, a.length]]; }
    } else {
      ops = i === 0 ? [[SOLO, b.length]] : p.diff.ops;
    }
    var rows = [], ai = 0, bi = 0;
    for (var k = 0; k < ops.length; k++) {
      var op = ops[k], kind = op[0];
      if (kind === REP) { rows.push([REP, ai++, bi++, op[1], op[2]]); continue; }
      for (var n = 0; n < op[1]; n++) {
        if (kind === EQ) { rows.push([EQ, ai++, bi++]); }
        else if (kind === DEL) { rows.push([DEL, ai++, -1]); }
        else if (kind === INS) { rows.push([INS, -1, bi++]); }
        else { rows.push([SOLO, -1, bi++]); }
      }
    }
    return { key: key, a: a, b: b, aOff: aOff, bOff: bOff, rows: rows };
  }

  /* Segments ["show"|"fold", start, end) of the rows; mirrors diff.fold(). */
  function segments(rows, context, keep) {
    var out = [], n = rows.length, r = 0;
    var eq = function (k) { return rows[k][0] === EQ && !(keep && keep(k)); };
    function push(kind, s, e) {
      if (e <= s) { return; }
      var last = out[out.length - 1];
      if (last && last[0] === kind && last[2] === s) { last[2] = e; } else { out.push([kind, s, e]); }
    }
    while (r < n) {
      var s = r;
      if (!eq(r)) {
        while (r < n && !eq(r)) { r++; }
        push("show", s, r);
        continue;
      }
      while (r < n && eq(r)) { r++; }
      var lo = s === 0 ? s : s + context, hi = r === n ? r : r - context;
      if (hi - lo >= 2) { push("show", s, lo); out.push(["fold", lo, hi]); push("show", hi, r); }
      else { push("show", s, r); }
    }
    return out;
  }

  function code(line, spans, cls) {
    if (!spans || !spans.length) { return esc(line); }
    var out = "", pos = 0;
    for (var k = 0; k < spans.length; k += 2) {
      out += esc(line.slice(pos, spans[k])) + '<mark class="' + cls + '">' + esc(line.slice(spans[k], spans[k + 1])) + "</mark>";
      pos = spans[k + 1];
    }
    return out + esc(line.slice(pos));
  }

  function row(kind, num, html, ti, ln) {
    var lens = hit(ti, ln) ? " k-lens" : "";
    return '<div class="r k-' + kind + lens + '" data-t="' + ti + '" data-l="' + ln + '"><span class="n">' + num + '</span><span class="c">' + html + "</span></div>";
  }
  var PAD = '<div class="r k-pad"><span class="n"></span><span class="c"></span></div>';

  function render() {
    var i = state.current, v = viewOf(i);
    var context = state.mode === "all" ? Infinity : state.mode === "none" ? 0 : D.context;
    var ta = i > 0 ? prevText(i) : null, tb = P[i].text;
    var keep = state.lens ? function (r) { var w = v.rows[r]; return (w[1] >= 0 && hit(ta, w[1] + v.aOff)) || (w[2] >= 0 && hit(tb, w[2] + v.bOff)); } : null;
    var segs = segments(v.rows, context, keep), A = [], B = [], firstChange = -1, shown = 0;
    var SA = paintSpec.a = [], SB = paintSpec.b = [];
    for (var s = 0; s < segs.length; s++) {
      var seg = segs[s];
      if (seg[0] === "fold" && !state.expanded[seg[1]]) {
        var count = seg[2] - seg[1], r0 = v.rows[seg[1]], r1 = v.rows[seg[2] - 1];
        var label = "\u22EF " + count + " unchanged line" + (count === 1 ? "" : "s");
        SA.push(null); SB.push(null);
        A.push('<div class="r k-fold" data-fold="' + seg[1] + '"><span class="n"></span><button type="button" class="c irt-unfold" data-fold="' + seg[1] + '">' +
          label + " (" + (r0[1] + v.aOff + 1) + "\u2013" + (r1[1] + v.aOff + 1) + ")</button></div>");
        B.push('<div class="r k-fold" data-fold="' + seg[1] + '"><span class="n"></span><button type="button" class="c irt-unfold" data-fold="' + seg[1] + '">' +
          label + " (" + (r0[2] + v.bOff + 1) + "\u2013" + (r1[2] + v.bOff + 1) + ")</button></div>");
        shown++;
        continue;
      }
      for (var r = seg[1]; r < seg[2]; r++) {
        var w = v.rows[r], kind = w[0];
        if (kind !== EQ && kind !== SOLO && firstChange < 0) { firstChange = shown; }
        shown++;
        var la = w[1] + v.aOff, lb = w[2] + v.bOff, xa = v.a[w[1]], xb = v.b[w[2]];
        if (kind === EQ) {
          A.push(row("eq", la + 1, esc(xa), ta, la)); SA.push([xa]);
          B.push(row("eq", lb + 1, esc(xb), tb, lb)); SB.push([xb]);
        } else if (kind === DEL) {
          A.push(row("del", la + 1, esc(xa), ta, la)); SA.push([xa]); B.push(PAD); SB.push(null);
        } else if (kind === INS) {
          A.push(PAD); SA.push(null); B.push(row("ins", lb + 1, esc(xb), tb, lb)); SB.push([xb]);
        } else if (kind === REP) {
          A.push(row("del k-rep", la + 1, code(xa, w[3], "em-del"), ta, la)); SA.push([xa, w[3], "em-del"]);
          B.push(row("ins k-rep", lb + 1, code(xb, w[4], "em-ins"), tb, lb)); SB.push([xb, w[4], "em-ins"]);
        } else {
          A.push(PAD); SA.push(null); B.push(row("solo", lb + 1, esc(xb), tb, lb)); SB.push([xb]);
        }
      }
    }
    var cols = Math.max(widest(v.a), widest(v.b));
    var digits = String(Math.max(v.a.length + v.aOff, v.b.length + v.bOff, 1)).length;
    var panes = $("irt-panes");
    panes.style.setProperty("--irt-gutter", (digits + 2) + "ch");
    panes.style.setProperty("--irt-cols", (cols + 4) + "ch");
    $("irt-canvas-a").innerHTML = A.join("");
    $("irt-canvas-b").innerHTML = B.join("");
    panes.setAttribute("data-rows", String(shown));
    queuePaint();
    return firstChange;
  }

  function scrollToChange(firstChange) {
    var sa = $("irt-scroll-a"), sb = $("irt-scroll-b");
    var rowH = 19, top = firstChange > 3 ? (firstChange - 3) * rowH : 0;
    sa.scrollTop = top; sb.scrollTop = top; sa.scrollLeft = 0; sb.scrollLeft = 0;
  }

  /* ---- header, notes, function selector --------------------------------- */

  function fnOptions(i) {
    var sel = $("irt-func"), p = P[i], safe = fnSafe(i), key = effectiveFn(i);
    var opts = ['<option value="">Whole file</option>'];
    if (safe) {
      var after = D.functions[p.text] || [], before = i > 0 ? D.functions[prevText(i)] || [] : [];
      var inAfter = {}, inBefore = {}, keys = [], k;
      for (k = 0; k < after.length; k++) { inAfter[after[k][0]] = true; keys.push(after[k][0]); }
      for (k = 0; k < before.length; k++) { inBefore[before[k][0]] = true; if (!inAfter[before[k][0]]) { keys.push(before[k][0]); } }
      for (k = 0; k < keys.length; k++) {
        var name = keys[k], label = D.labels[name] || name, extra = "";
        if (i > 0 && !inBefore[name]) { extra = " (added)"; }
        else if (i > 0 && !inAfter[name]) { extra = " (deleted)"; }
        else if (i > 0 && p.funcs[name]) { extra = " (+" + p.funcs[name].ins + " \u2212" + p.funcs[name].del + ")"; }
        opts.push('<option value="' + esc(name) + '"' + (name === key ? " selected" : "") + ">" + esc(label + extra) + "</option>");
      }
    }
    sel.innerHTML = opts.join("");
    sel.value = key;
    sel.disabled = !safe;
    sel.title = safe ? "Focus the diff on one function" : "A snapshot of this pass could not be parsed safely: Whole file only";
  }

  function notes(i, v) {
    var p = P[i], out = [];
    if (!fnSafe(i) && state.fn) {
      out.push('<div class="irt-note irt-note-info">Function selector disabled: a snapshot of this pass could not be parsed safely. Showing Whole file.</div>');
    } else if (state.fn && !v.key) {
      out.push('<div class="irt-note irt-note-info"><code>' + esc(D.labels[state.fn] || state.fn) + "</code> is not in this pass. Showing Whole file.</div>");
    }
    if (i > 0) {
      var inf = info(i);
      if (v.key && inf.status === "noop") { out.push('<div class="irt-note irt-note-info">This pass did not change <code>' + esc(D.labels[v.key] || v.key) + "</code>.</div>"); }
      else if (!v.key && !p.diff.ins && !p.diff.del) { out.push('<div class="irt-note irt-note-info">No-op: this pass did not change the printed IR.</div>'); }
    }
    if (p.verdict) {
      var vd = p.verdict, rows = vd.tensors.map(function (t) {
        return "<tr><td><code>" + esc(t[0]) + '</code></td><td class="irt-v-' + (t[1] ? "pass" : "fail") + '">' + (t[1] ? "pass" : "fail") +
          "</td><td>" + (t[2] === null ? "\u2013" : esc(String(t[2]))) + "</td><td>" + esc(t[3] || "") + "</td></tr>";
      }).join("");
      out.push('<details class="irt-note irt-verdict-panel irt-vp-' + vd.status + '"' + (vd.status === "pass" ? "" : " open") + "><summary>Validation: <b>" + vd.status + "</b>" +
        (D.firstDiverging === p.index ? ' <span class="irt-badge irt-diverge">first diverging pass</span>' : "") +
        (vd.message ? " \u2014 " + esc(vd.message) : "") + "</summary>" +
        (rows ? '<table class="irt-tensors"><thead><tr><th>tensor</th><th>verdict</th><th>max abs diff</th><th></th></tr></thead><tbody>' + rows + "</tbody></table>" : "") +
        "</details>");
    }
    if (p.warning !== null) {
      out.push('<details class="irt-note irt-warnings" open><summary>\u26A0 Warnings <span class="irt-file">' + esc(p.warningFile) + "</span></summary><pre>" + esc(p.warning) + "</pre></details>");
    }
    $("irt-notes").innerHTML = out.join("");
  }

  function header(i, v) {
    var p = P[i], inf = info(i);
    $("irt-pass-title").textContent = String(p.index).padStart(2, "0") + " " + p.name + (v.key ? "  \u203A  " + (D.labels[v.key] || v.key) : "");
    var stats = i === 0 ? "input snapshot" : (inf.status === "absent" ? "" : "+" + inf.ins + " \u2212" + inf.del);
    $("irt-pass-stats").textContent = stats;
    $("irt-file-a").textContent = $("irt-file-a").title = i > 0 ? P[i - 1].file : "(none)";
    $("irt-file-b").textContent = $("irt-file-b").title = p.file;  /* the title: the whole name when it is cut */
    $("irt-copy-a").disabled = i === 0;
  }

  /* ---- the lens panel: .pto ops, C++ lines, cycles per pipe ----------------- */

  function lensRows(section, src) {
    var out = [];
    for (var f = 0; f < section.length; f++) {
      var sec = section[f], rows = [];
      for (var k = 0; k < sec.lines.length; k++) {
        var ln = sec.lines[k], on = lensSet[ln[1]] ? " k-lens" : "";
        rows.push('<div class="r irt-lr' + on + '" data-src="' + src + '" data-d="' + ln[1] + '" title="' + esc(L.dsl[ln[1]]) + '">' +
          '<span class="n">' + ln[0] + '</span><span class="c">' + paint(ln[2], ln[3]) + "</span></div>");
      }
      out.push('<div class="irt-lfile">' + esc(sec.file) + "</div>" + rows.join(""));
    }
    return out.join("") || '<div class="irt-lempty">none in this build</div>';
  }

  function cyclesHtml() {
    var inc = L.incore;
    if (!inc) {
      return '<div class="irt-lempty irt-lhint">No in-core records in this build. Run it with ' +
        "<code>RunConfig(enable_incore_trace=True)</code> (files under <code>dfx_outputs/incore/</code>), then build this report again.</div>";
    }
    if (!state.lens) { return '<div class="irt-lempty">' + inc.runs.length + " kernel run(s) recorded. Pick a line.</div>"; }
    var per = {}, count = 0, total = 0;
    state.lens.forEach(function (d) {
      var c = inc.cycles[d] || {};
      for (var pipe in c) { per[pipe] = (per[pipe] || 0) + c[pipe]; total += c[pipe]; }
      count += inc.count[d] || 0;
    });
    if (!count) { return '<div class="irt-lempty">No instruction of this line ran on a core (host or orchestration code).</div>'; }
    var rows = L.pipes.filter(function (pp) { return per[pp]; }).map(function (pp) {
      return '<tr data-pipe="' + pp + '"><td>' + pp + '</td><td class="irt-num">' + per[pp] + '</td><td class="irt-num">' +
        (100 * per[pp] / total).toFixed(1) + "%</td></tr>";
    });
    return '<table class="irt-cycles"><thead><tr><th>pipe</th><th>cycles</th><th>share</th></tr></thead><tbody>' + rows.join("") +
      '</tbody><tfoot><tr><td>total</td><td class="irt-num">' + total + "</td><td>" + count + " instr.</td></tr></tfoot></table>";
  }

  function frontendLines() {
    var out = [], ti = P[0].text, ls = lines(ti);
    for (var k = 0; k < ls.length; k++) { if (hit(ti, k)) { out.push(k + 1); } }
    return out;
  }

  function renderLens() {
    var box = $("irt-lens");
    if (!L) { box.hidden = true; return; }
    box.hidden = false;
    var head;
    if (state.lens) {
      var fl = frontendLines(), n = 0;
      for (var i = 1; i < P.length; i++) { if (touched(i)) { n++; } }
      head = '<b>Lens</b> <code id="irt-lens-dsl">' + esc(lensLabel(state.lens)) + "</code>" +
        (fl.length ? ' <button type="button" id="irt-lens-src" title="Show it in 00_frontend.py">' + esc(P[0].file) + " line " + fl.join(", ") + "</button>" : "") +
        ' <span class="irt-lens-touch">touched by <b id="irt-lens-n">' + n + "</b> pass" + (n === 1 ? "" : "es") + " \u25C6</span>" +
        ' <button type="button" id="irt-lens-clear">Clear</button>';
    } else {
      head = "<b>Lens</b> <span class=\"irt-muted\">click a line of any dump (e.g. 00_frontend.py), a .pto op or a C++ line to follow it through every pass</span>";
    }
    $("irt-lens-head").innerHTML = head;
    $("irt-lens-pto").innerHTML = lensRows(L.pto, "pto");
    $("irt-lens-cpp").innerHTML = lensRows(L.cpp, "cpp");
    $("irt-lens-cycles").innerHTML = cyclesHtml();
    ["irt-lens-pto", "irt-lens-cpp"].forEach(function (id) {
      var el = $(id), first = el.querySelector(".k-lens");
      if (first) { el.scrollTop = Math.max(0, first.offsetTop - 2 * ROW_H); }
    });
  }

  function scrollToLens() {
    var first = $("irt-canvas-b").querySelector(".k-lens") || $("irt-canvas-a").querySelector(".k-lens");
    if (!first) { return false; }
    var top = Math.max(0, first.offsetTop - first.parentNode.offsetTop - 3 * ROW_H);
    $("irt-scroll-a").scrollTop = top; $("irt-scroll-b").scrollTop = top;
    return true;
  }

  /* Follow the DSL lines ``ids`` (empty or null: stop). */
  function setLens(ids) {
    ids = ids && ids.length ? ids.slice().sort(function (a, b) { return a - b; }) : null;
    state.lens = ids;
    lensSet = {}; hitCache = {};
    if (ids) { ids.forEach(function (d) { lensSet[d] = true; }); }
    document.documentElement.setAttribute("data-irt-lens", ids ? lensLabel(ids) : "");
    refreshList();
    render();
    scrollToLens();
    renderLens();
  }

  /* ---- actions ---------------------------------------------------------- */

  function select(i) {
    var t0 = performance.now();
    if (state.current >= 0 && items[state.current]) { items[state.current].firstChild.removeAttribute("aria-current"); }
    state.current = i;
    state.expanded = {};
    items[i].firstChild.setAttribute("aria-current", "true");
    var v = viewOf(i);
    header(i, v);
    fnOptions(i);
    notes(i, v);
    var firstChange = render();
    if (!state.lens || !scrollToLens()) { scrollToChange(firstChange); }
    else { $("irt-scroll-a").scrollLeft = 0; $("irt-scroll-b").scrollLeft = 0; }
    var list = $("irt-list"), li = items[i];
    if (li.offsetTop < list.scrollTop || li.offsetTop + li.offsetHeight > list.scrollTop + list.clientHeight) {
      li.scrollIntoView({ block: "nearest" });
    }
    document.documentElement.setAttribute("data-irt-pass", String(P[i].index));
    api.lastRenderMs = performance.now() - t0;
  }

  function setFn(key) {
    state.fn = key;
    refreshList();
    ensureVisibleSelection();
    select(state.current);
  }

  function setLayout(layout) {
    state.layout = layout;
    $("irt-panes").setAttribute("data-layout", layout);
    $("irt-layout-side").setAttribute("aria-pressed", layout === "side" ? "true" : "false");
    $("irt-layout-stack").setAttribute("aria-pressed", layout === "stack" ? "true" : "false");
  }

  function setMode(mode) {
    state.mode = mode;
    state.expanded = {};
    $("irt-expand").setAttribute("aria-pressed", mode === "all" ? "true" : "false");
    $("irt-collapse").setAttribute("aria-pressed", mode === "none" ? "true" : "false");
    render();
  }

  function status(msg) {
    var s = $("irt-status");
    s.textContent = msg;
    clearTimeout(status.timer);
    status.timer = setTimeout(function () { s.textContent = ""; }, 4000);
  }

  function copyFallback(text) {
    var ta = document.createElement("textarea"), ok = false;
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "fixed"; ta.style.top = "-1000px"; ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(ta);
    return ok;
  }

  function copy(which) {
    var i = state.current, ti = which === "a" ? prevText(i) : P[i].text;
    if (ti === null) { return; }
    var text = D.texts[ti], file = which === "a" ? P[i - 1].file : P[i].file;
    var done = function (ok, how) {
      api.lastCopy = { which: which, file: file, length: text.length, ok: ok, how: how };
      status(ok ? "Copied " + file + " (" + lines(ti).length + " lines)" : "Copy failed: select the text and copy it by hand");
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done(true, "clipboard"); },
        function () { done(copyFallback(text), "fallback"); });
    } else {
      done(copyFallback(text), "fallback");
    }
  }

  function bind() {
    $("irt-f-changed").addEventListener("click", function () { state.showChanged = !state.showChanged; refreshList(); ensureVisibleSelection(); });
    $("irt-f-noop").addEventListener("click", function () { state.showNoop = !state.showNoop; refreshList(); ensureVisibleSelection(); });
    $("irt-layout-side").addEventListener("click", function () { setLayout("side"); });
    $("irt-layout-stack").addEventListener("click", function () { setLayout("stack"); });
    $("irt-expand").addEventListener("click", function () { setMode(state.mode === "all" ? "context" : "all"); });
    $("irt-collapse").addEventListener("click", function () { setMode(state.mode === "none" ? "context" : "none"); });
    $("irt-copy-a").addEventListener("click", function () { copy("a"); });
    $("irt-copy-b").addEventListener("click", function () { copy("b"); });
    $("irt-func").addEventListener("change", function (e) { setFn(e.target.value); });
    $("irt-panes").addEventListener("click", function (e) {
      var f = e.target.closest("[data-fold]");
      if (f) { state.expanded[f.getAttribute("data-fold")] = true; render(); return; }
      var r = e.target.closest(".r[data-t]");
      if (!r || !L || (window.getSelection && String(window.getSelection()).length)) { return; }
      var ids = lensIds(+r.getAttribute("data-t"), +r.getAttribute("data-l"));
      if (!ids || !ids.length) { status("No DSL location on this line"); return; }
      var same = state.lens && ids.length === state.lens.length && ids.every(function (d) { return lensSet[d]; });
      setLens(same ? null : ids);
    });
    $("irt-lens").addEventListener("click", function (e) {
      var t = e.target;
      if (t.id === "irt-lens-clear") { setLens(null); return; }
      if (t.id === "irt-lens-src") { select(0); scrollToLens(); return; }
      var r = t.closest(".irt-lr");
      if (r) { setLens([+r.getAttribute("data-d")]); }
    });
    var sa = $("irt-scroll-a"), sb = $("irt-scroll-b");
    var mirror = function (src, dst) {
      src.addEventListener("scroll", function () {
        if (dst.scrollTop !== src.scrollTop) { dst.scrollTop = src.scrollTop; }
        if (dst.scrollLeft !== src.scrollLeft) { dst.scrollLeft = src.scrollLeft; }
        queuePaint();
      }, { passive: true });
    };
    mirror(sa, sb); mirror(sb, sa);
    document.addEventListener("keydown", function (e) {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) { return; }
      var t = e.target, tag = t && t.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || (t && t.isContentEditable)) { return; }
      if (e.key === "j" || e.key === "ArrowDown") { move(1); e.preventDefault(); }
      else if (e.key === "k" || e.key === "ArrowUp") { move(-1); e.preventDefault(); }
    });
  }

  var api = window.IRTrace = {
    state: state, select: select, setFn: setFn, setLayout: setLayout, setMode: setMode,
    visible: visibleList, lastRenderMs: 0, lastCopy: null, splitLines: splitLines, segments: segments,
    setLens: setLens, paintVisible: paintVisible, touched: touched
  };

  function init() {
    buildList();
    bind();
    var first = -1;
    for (var i = 1; i < P.length; i++) { if (P[i].diff.ins || P[i].diff.del) { first = i; break; } }
    if (first < 0) { state.showNoop = true; first = P.length > 1 ? 1 : 0; }
    $("report-bar-extra").textContent = D.source + " \u00B7 " + D.format + " \u00B7 " + P.length + " snapshots \u00B7 context " + D.context;
    setLayout("side");
    refreshList();
    select(first);
    renderLens();
    warm(0);
  }
  init();
})();
