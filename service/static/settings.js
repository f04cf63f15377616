/* Tagdesk organization settings: the "Copy" button of a newly generated key or one-time link
   (data-copy-what names it: "key" unless said). Loaded from this site only (the
   Content-Security-Policy allows no inline script). Without JavaScript the button stays
   hidden and the key can be selected and copied by hand. */
(function () {
  "use strict";

  function copyText(text, field) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Plain HTTP on a non-local address has no clipboard API: the old way, from the field.
    return new Promise(function (resolve, reject) {
      field.focus();
      field.select();
      var copied = false;
      try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
      if (copied) { resolve(); } else { reject(new Error("copy refused")); }
    });
  }

  function setUp(button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    if (!field) return;
    var label = button.textContent;
    var what = button.getAttribute("data-copy-what") || "key";
    var timer = null;

    button.hidden = false;
    button.addEventListener("click", function () {
      copyText(field.value, field).then(function () {
        button.textContent = "Copied";
        button.setAttribute("data-copied", "");
        if (status) status.textContent = "The " + what + " is on your clipboard.";
        clearTimeout(timer);
        timer = setTimeout(function () {
          button.textContent = label;
          button.removeAttribute("data-copied");
        }, 4000);
      }, function () {
        field.focus();
        field.select();
        if (status) {
          status.textContent = "Copying did not work here: the " + what + " is selected, press " +
            "Ctrl+C (or \u2318C) to copy it.";
        }
      });
    });
  }

  function init() {
    document.querySelectorAll("button[data-copy]").forEach(setUp);
    // Clicking into the key selects all of it, ready to copy by hand.
    document.querySelectorAll("input[data-select-all]").forEach(function (field) {
      field.addEventListener("focus", function () { field.select(); });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
