// Page behaviour that needs no inline script (the Content-Security-Policy allows none).
document.addEventListener("change", function (event) {
  // The language switcher submits itself; without JavaScript its button does.
  if (event.target && event.target.id === "lang-select" && event.target.form) {
    event.target.form.submit();
  }
});

// A request that HTMX sent and the server refused (409 for a frozen project, 400, 403...):
// its plain-text reason is shown at the top of the page instead of nothing happening.
document.addEventListener("htmx:responseError", function (event) {
  var xhr = event.detail && event.detail.xhr;
  if (!xhr || (xhr.getResponseHeader("Content-Type") || "").indexOf("text/plain") !== 0) {
    return;
  }
  var box = document.getElementById("request-refused");
  if (!box) {
    box = document.createElement("p");
    box.id = "request-refused";
    box.className = "errors";
    box.setAttribute("role", "alert");
    var main = document.getElementById("main") || document.body;
    main.insertBefore(box, main.firstChild);
  }
  box.textContent = xhr.responseText;
});
