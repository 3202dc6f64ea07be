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

// A result form shows the fields its outcome needs: the failure cause for a failure, what to
// integrate, by whom and how much for a needed integration. Without JavaScript every field
// stays visible; a field the server marked wrong always does.
var OUTCOME_FIELDS = {
  failure_cause: ["failed"],
  integration_what: ["needs_integration"],
  integration_owner_team: ["needs_integration"],
  integration_effort_days: ["needs_integration"]
};

function showOutcomeFields(form) {
  var checked = form.querySelector("input[name='outcome']:checked");
  var outcome = checked ? checked.value : "";
  Object.keys(OUTCOME_FIELDS).forEach(function (name) {
    var box = form.querySelector("[data-field='" + name + "']");
    if (box) {
      box.hidden = OUTCOME_FIELDS[name].indexOf(outcome) < 0 && !box.classList.contains("has-error");
    }
  });
}

function showOutcomeFieldsIn(root) {
  if (root && root.querySelectorAll) {
    root.querySelectorAll("form.result-form").forEach(showOutcomeFields);
  }
}

document.addEventListener("change", function (event) {
  var form = event.target && event.target.closest && event.target.closest("form.result-form");
  if (form) {
    showOutcomeFields(form);
  }
});
document.addEventListener("htmx:afterSwap", function (event) {
  showOutcomeFieldsIn(event.target);
});
document.addEventListener("DOMContentLoaded", function () {
  showOutcomeFieldsIn(document);
});

// A form whose fields depend on a kind (registering a cluster): only the chosen kind's fields
// show. The kinds' fields come from the server (a JSON script element the form names); without
// JavaScript every field shows, and the server ignores those the kind does not use.
function showKindFields(form) {
  var source = document.getElementById(form.getAttribute("data-kind-fields"));
  var kind = form.querySelector("[name=kind]");
  if (!source || !kind) { return; }
  var wanted = JSON.parse(source.textContent)[kind.value] || null;
  form.querySelectorAll("[data-field]").forEach(function (field) {
    field.hidden = wanted !== null && wanted.indexOf(field.getAttribute("data-field")) < 0;
  });
}
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("form[data-kind-fields]").forEach(showKindFields);
});
document.addEventListener("change", function (event) {
  var form = event.target && event.target.name === "kind" && event.target.closest("form[data-kind-fields]");
  if (form) { showKindFields(form); }
});
