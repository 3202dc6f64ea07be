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

// Forms marked data-confirm ask first (removing a member, for instance); without JavaScript
// they submit as they are.
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form && form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

// A button data-copy="ID" copies the text of element ID and says so.
document.addEventListener("click", function (event) {
  var button = event.target && event.target.closest && event.target.closest("[data-copy]");
  if (!button) {
    return;
  }
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source || !navigator.clipboard) {
    return;
  }
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    button.textContent = button.getAttribute("data-copied") || button.textContent;
  });
});
