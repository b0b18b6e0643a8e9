/* The report shell: embedded data and the theme toggle. */
(function () {
  "use strict";
  var root = document.documentElement;
  var listeners = [];
  var chosen = false;
  var button = document.getElementById("theme-toggle");

  function current() { return root.getAttribute("data-theme") === "dark" ? "dark" : "light"; }

  function apply(theme) {
    root.setAttribute("data-theme", theme);
    if (button) {
      var next = theme === "dark" ? "light" : "dark";
      button.textContent = theme === "dark" ? "\u2600 Light" : "\u263E Dark";
      button.setAttribute("aria-label", "Switch to " + next + " theme");
      button.setAttribute("aria-pressed", theme === "dark" ? "true" : "false");
    }
    listeners.forEach(function (f) { f(theme); });
  }

  function setTheme(theme) { chosen = true; apply(theme); }

  if (button) {
    button.addEventListener("click", function () { setTheme(current() === "dark" ? "light" : "dark"); });
  }
  if (window.matchMedia) {
    var mq = window.matchMedia("(prefers-color-scheme: dark)");
    var follow = function (e) { if (!chosen) { apply(e.matches ? "dark" : "light"); } };
    if (mq.addEventListener) { mq.addEventListener("change", follow); } else if (mq.addListener) { mq.addListener(follow); }
  }
  apply(current());

  var dataNode = document.getElementById("report-data");
  window.PyptoReport = {
    data: dataNode ? JSON.parse(dataNode.textContent) : null,
    theme: current,
    setTheme: setTheme,
    onTheme: function (f) { listeners.push(f); },
    escape: function (s) {
      return String(s).replace(/[&<>"']/g, function (c) {
        return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
      });
    }
  };
})();
