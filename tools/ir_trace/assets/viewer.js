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
    showNoop: false
  };

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
        badges + '<span class="irt-counts"></span><span class="irt-dot"></span></button></li>');
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
      li.className = "irt-item irt-s-" + inf.status + (inf.approx ? " irt-approx" : "");
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
  function segments(rows, context) {
    var out = [], n = rows.length, r = 0;
    function push(kind, s, e) {
      if (e <= s) { return; }
      var last = out[out.length - 1];
      if (last && last[0] === kind && last[2] === s) { last[2] = e; } else { out.push([kind, s, e]); }
    }
    while (r < n) {
      var s = r;
      if (rows[r][0] !== EQ) {
        while (r < n && rows[r][0] !== EQ) { r++; }
        push("show", s, r);
        continue;
      }
      while (r < n && rows[r][0] === EQ) { r++; }
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

  function row(kind, num, html) {
    return '<div class="r k-' + kind + '"><span class="n">' + num + '</span><span class="c">' + html + "</span></div>";
  }
  var PAD = '<div class="r k-pad"><span class="n"></span><span class="c"></span></div>';

  function render() {
    var i = state.current, v = viewOf(i);
    var context = state.mode === "all" ? Infinity : state.mode === "none" ? 0 : D.context;
    var segs = segments(v.rows, context), A = [], B = [], firstChange = -1, shown = 0;
    for (var s = 0; s < segs.length; s++) {
      var seg = segs[s];
      if (seg[0] === "fold" && !state.expanded[seg[1]]) {
        var count = seg[2] - seg[1], r0 = v.rows[seg[1]], r1 = v.rows[seg[2] - 1];
        var label = "\u22EF " + count + " unchanged line" + (count === 1 ? "" : "s");
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
        if (kind === EQ) {
          A.push(row("eq", w[1] + v.aOff + 1, esc(v.a[w[1]])));
          B.push(row("eq", w[2] + v.bOff + 1, esc(v.b[w[2]])));
        } else if (kind === DEL) {
          A.push(row("del", w[1] + v.aOff + 1, esc(v.a[w[1]]))); B.push(PAD);
        } else if (kind === INS) {
          A.push(PAD); B.push(row("ins", w[2] + v.bOff + 1, esc(v.b[w[2]])));
        } else if (kind === REP) {
          A.push(row("del k-rep", w[1] + v.aOff + 1, code(v.a[w[1]], w[3], "em-del")));
          B.push(row("ins k-rep", w[2] + v.bOff + 1, code(v.b[w[2]], w[4], "em-ins")));
        } else {
          A.push(PAD); B.push(row("solo", w[2] + v.bOff + 1, esc(v.b[w[2]])));
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
    $("irt-file-a").textContent = i > 0 ? P[i - 1].file : "(none)";
    $("irt-file-b").textContent = p.file;
    $("irt-copy-a").disabled = i === 0;
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
    scrollToChange(render());
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
      if (f) { state.expanded[f.getAttribute("data-fold")] = true; render(); }
    });
    var sa = $("irt-scroll-a"), sb = $("irt-scroll-b");
    var mirror = function (src, dst) {
      src.addEventListener("scroll", function () {
        if (dst.scrollTop !== src.scrollTop) { dst.scrollTop = src.scrollTop; }
        if (dst.scrollLeft !== src.scrollLeft) { dst.scrollLeft = src.scrollLeft; }
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
    visible: visibleList, lastRenderMs: 0, lastCopy: null, splitLines: splitLines, segments: segments
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
    warm(0);
  }
  init();
})();
