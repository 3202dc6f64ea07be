// Page behaviour that needs no inline script (the Content-Security-Policy allows none).
document.addEventListener("change", function (event) {
  // The language switcher submits itself; without JavaScript its button does.
  if (event.target && event.target.id === "lang-select" && event.target.form) {
    event.target.form.submit();
  }
});
