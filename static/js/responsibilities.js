// The responsibility grid's bulk assignment: the box of a row or a column ticks or clears every
// cell of it, and shows whether all, some (indeterminate) or none of them are ticked. Without
// JavaScript the server reads a ticked row or column as all of its cells, so both agree.
(function () {
  "use strict";
  var FORM = "bulk-assign";

  function cellsOf(box) {
    var key = box.name === "row" ? "data-row" : "data-column";
    return Array.prototype.filter.call(
      box.form.querySelectorAll("input[name='cell']"),
      function (cell) { return cell.getAttribute(key) === box.value; }
    );
  }

  function sync(form) {
    form.querySelectorAll("input[name='row'], input[name='column']").forEach(function (box) {
      var cells = cellsOf(box);
      var ticked = cells.filter(function (cell) { return cell.checked; }).length;
      box.checked = cells.length > 0 && ticked === cells.length;
      box.indeterminate = ticked > 0 && ticked < cells.length;
    });
  }

  function syncAll() {
    var form = document.getElementById(FORM);
    if (form) { sync(form); }
  }

  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box || !box.form || box.form.id !== FORM) { return; }
    if (box.name === "row" || box.name === "column") {
      cellsOf(box).forEach(function (cell) { cell.checked = box.checked; });
    } else if (box.name !== "cell") {
      return;
    }
    sync(box.form);
  });
  document.addEventListener("DOMContentLoaded", syncAll);
  document.addEventListener("htmx:afterSettle", syncAll);
})();
