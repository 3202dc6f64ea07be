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
  // modifier key, the link opens the cell's own page. Where the panel is not beside the grid
  // (narrow screens), the open panel covers the page as a dialog and keeps the focus inside.
  var opener = null, placeholder = null;
  var narrow = window.matchMedia("(max-width: 1100px)");
  function panel() { return document.getElementById("cell-panel"); }
  function overlaid(box) { return narrow.matches && box.classList.contains("is-open"); }
  function markOpen(box, open) {
    box.classList.toggle("is-open", open);
    if (open && narrow.matches) {
      box.setAttribute("role", "dialog");
      box.setAttribute("aria-modal", "true");
      box.setAttribute("aria-labelledby", "panel-h");
    } else {
      ["role", "aria-modal", "aria-labelledby"].forEach(function (name) { box.removeAttribute(name); });
    }
  }
  // Closing puts the panel back as it was and gives the focus back to the cell it came from.
  function closePanel() {
    var box = panel();
    if (!box || placeholder === null || opener === null) { return false; }
    box.innerHTML = placeholder;
    markOpen(box, false);
    var back = opener.isConnected ? opener : document.getElementById(opener.parentElement && opener.parentElement.id);
    back = back && back.matches("a[data-cell]") ? back : back && back.querySelector("a[data-cell]");
    opener = null;
    if (back) { back.focus(); }
    return true;
  }
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("#cell-panel [data-panel-close]")) {
      event.preventDefault();
      closePanel();
      return;
    }
    var link = event.target.closest && event.target.closest("#matrix a[data-cell]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) { return; }
    if (!window.htmx) { return; }
    event.preventDefault();
    var box = panel();
    if (placeholder === null && box) { placeholder = box.innerHTML; }
    opener = link;
    window.htmx.ajax("GET", link.href, { target: "#cell-panel", swap: "innerHTML" });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && opener !== null) {
      if (closePanel()) { event.preventDefault(); }
      return;
    }
    var box = panel();
    if (event.key !== "Tab" || !box || !overlaid(box)) { return; }
    // A dialog over the page: Tab goes round inside it.
    var stops = Array.from(box.querySelectorAll("a[href], button, input, select, textarea, [tabindex='0']"))
      .filter(function (el) { return !el.disabled && el.getClientRects().length; });
    if (!stops.length) { return; }
    var first = stops[0], last = stops[stops.length - 1];
    var inside = box.contains(document.activeElement);
    if (event.shiftKey && (!inside || document.activeElement === first)) {
      event.preventDefault(); last.focus();
    } else if (!event.shiftKey && (!inside || document.activeElement === last)) {
      event.preventDefault(); first.focus();
    }
  });
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "cell-panel") {
      var box = event.detail.target;
      if (opener !== null && !box.classList.contains("is-open")) { box.scrollTop = 0; }
      markOpen(box, opener !== null);
      var heading = document.getElementById("panel-h");
      if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus({ preventScroll: true }); }
    }
  });
})();
