// Keyboard navigation in the results matrix: the grid is one tab stop (the cell last used, or
// the first), arrow keys move between cells inside it, Enter opens one.
(function () {
  "use strict";
  function cells() { return Array.from(document.querySelectorAll("#matrix a[data-cell]")); }
  function rove(current) {
    cells().forEach(function (a) { a.setAttribute("tabindex", a === current ? "0" : "-1"); });
  }
  function roveFirst() {
    var all = cells();
    var kept = all.filter(function (a) { return a.getAttribute("tabindex") === "0"; })[0];
    if (all.length) { rove(kept || all[0]); }
  }
  document.addEventListener("focusin", function (event) {
    var link = event.target.closest && event.target.closest("#matrix a[data-cell]");
    if (link) { rove(link); }
  });
  document.addEventListener("DOMContentLoaded", roveFirst);
  document.addEventListener("htmx:afterSwap", roveFirst);
  document.addEventListener("keydown", function (event) {
    var link = event.target.closest && event.target.closest("#matrix a[data-cell]");
    if (!link) { return; }
    var td = link.parentElement, tr = td.parentElement;
    var col = Array.prototype.indexOf.call(tr.children, td);
    var target = null;
    if (event.key === "ArrowRight") { target = td.nextElementSibling; }
    else if (event.key === "ArrowLeft") { target = td.previousElementSibling; }
    else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      var all = cells(), rows = [];
      all.forEach(function (a) { var r = a.parentElement.parentElement; if (rows.indexOf(r) < 0) { rows.push(r); } });
      var i = rows.indexOf(tr) + (event.key === "ArrowDown" ? 1 : -1);
      if (i >= 0 && i < rows.length) { target = rows[i].children[col]; }
    } else { return; }
    var next = target && target.querySelector("a[data-cell]");
    if (next) { event.preventDefault(); next.focus(); }
  });
  // A cell opens in the panel beside the grid: one listener for every cell, so that the cells
  // need no attributes of their own (a page holds thousands). Without script, or with a
  // modifier key, the link opens the cell's own page.
  var opener = null, placeholder = null;
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("#matrix a[data-cell]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) { return; }
    if (!window.htmx) { return; }
    event.preventDefault();
    var panel = document.getElementById("cell-panel");
    if (placeholder === null && panel) { placeholder = panel.innerHTML; }
    opener = link;
    window.htmx.ajax("GET", link.href, { target: "#cell-panel", swap: "innerHTML" });
  });
  // Escape closes the open cell and gives the focus back to the cell it was opened from.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || opener === null) { return; }
    var panel = document.getElementById("cell-panel");
    if (!panel || placeholder === null) { return; }
    event.preventDefault();
    panel.innerHTML = placeholder;
    var back = opener.isConnected ? opener : document.getElementById(opener.parentElement && opener.parentElement.id);
    opener = null;
    if (back) { back.focus(); }
  });
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "cell-panel") {
      var heading = document.getElementById("panel-h");
      if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus({ preventScroll: true }); }
    }
  });
})();
