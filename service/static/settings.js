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

/* Importing queries: an import's page (or a Columns page while its file is checked) asks for
   its progress every second (the box's data-progress-every, in milliseconds) while it runs,
   moves the bar and the numbers, tells screen readers every quarter, and shows the report or
   the check's result (a reload) once it has ended; a failed request is tried again, less and
   less often. The box's data-progress-quarter and data-progress-ended attributes word what
   is said.
   While a file uploads, the form's button says so. Without JavaScript the page shows the
   progress when it is reloaded. */
(function () {
  "use strict";

  function followImport(box) {
    var url = box.getAttribute("data-import-progress");
    var bar = box.querySelector("progress");
    var numbers = box.querySelector("[data-import-numbers]");
    var announce = box.querySelector("[data-import-announce]");
    var title = box.querySelector(".import-progress__title");
    var quarter = Math.floor((bar ? bar.value : 0) / 25);
    var every = parseInt(box.getAttribute("data-progress-every"), 10) || 1000;
    var delay = every;
    var quarterText = box.getAttribute("data-progress-quarter") || "% of the file imported.";
    var endedText = box.getAttribute("data-progress-ended") ||
      "The import has ended. Loading its report…";

    function later() { window.setTimeout(ask, delay); }

    function show(progress) {
      if (bar) {
        bar.value = progress.percent;
        bar.textContent = progress.percent + "%";
      }
      if (numbers) numbers.textContent = progress.text;
      if (title && progress.state === "running") title.textContent = "Importing";
      var now = Math.floor(progress.percent / 25);
      if (announce && now > quarter && !progress.done) {
        announce.textContent = progress.percent + quarterText;
      }
      quarter = Math.max(quarter, now);
    }

    function ask() {
      fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin",
                   cache: "no-store" })
        .then(function (response) {
          if (!response.ok) throw new Error("status " + response.status);
          return response.json();
        })
        .then(function (progress) {
          delay = every;
          show(progress);
          if (progress.done) {
            if (announce) announce.textContent = endedText;
            window.location.reload();
          } else {
            later();
          }
        }, function () {
          delay = Math.min(delay * 2, 30000);
          later();
        });
    }

    later();
  }

  function setUpImportForm(form) {
    form.addEventListener("submit", function () {
      var button = form.querySelector("button[type=submit]");
      if (!button) return;
      window.setTimeout(function () {
        button.disabled = true;
        button.textContent = "Uploading…";
      }, 0);
    });
  }

  function init() {
    document.querySelectorAll("[data-import-progress]").forEach(followImport);
    document.querySelectorAll("form[data-import-form]").forEach(setUpImportForm);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
