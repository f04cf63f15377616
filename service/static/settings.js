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

/* Tags: the colour field — a picker and a #rrggbb text field kept in sync — with a live
   preview chip, a warning when neither black nor white text reaches 4.5:1 on the colour
   (WCAG 2, the rule of weblib/colors.py), and the colours of the tag chips on the page.
   A colour reaches element.style only after matching #rrggbb: the Content-Security-Policy
   (style-src 'self') refuses style attributes written in the markup, not styles set through
   the DOM. Without JavaScript the text field alone sets the colour and chips stay grey. */
(function () {
  "use strict";

  var HEX = /^#[0-9a-f]{6}$/;
  var READABLE = 4.5;

  function colourCode(value) {
    value = (value || "").trim().toLowerCase();
    if (/^[0-9a-f]{6}$/.test(value)) value = "#" + value;
    return HEX.test(value) ? value : null;
  }

  function channel(value) {
    var srgb = value / 255;
    return srgb <= 0.04045 ? srgb / 12.92 : Math.pow((srgb + 0.055) / 1.055, 2.4);
  }

  function luminance(colour) {
    return 0.2126 * channel(parseInt(colour.slice(1, 3), 16)) +
      0.7152 * channel(parseInt(colour.slice(3, 5), 16)) +
      0.0722 * channel(parseInt(colour.slice(5, 7), 16));
  }

  function contrast(first, second) {
    var a = luminance(first), b = luminance(second);
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }

  // Black or white, whichever contrasts more (black on a tie), as the server decides.
  function textColour(background) {
    return contrast(background, "#000000") >= contrast(background, "#ffffff") ?
      "#000000" : "#ffffff";
  }

  function readable(background) {
    return contrast(background, textColour(background)) >= READABLE;
  }

  function paint(chip, colour) {
    colour = colourCode(colour);
    if (colour) {
      chip.style.backgroundColor = colour;
      chip.style.color = textColour(colour);
      chip.style.borderColor = colour;
    } else {
      chip.style.removeProperty("background-color");
      chip.style.removeProperty("color");
      chip.style.removeProperty("border-color");
    }
  }

  function setUpField(field) {
    var form = field.closest("form");
    var picker = field.querySelector("[data-colour-picker]");
    var code = field.querySelector("[data-colour-code]");
    var preview = form.querySelector("[data-colour-preview]");
    var warning = field.querySelector("[data-colour-warning]");
    var name = form.querySelector("[data-preview-name]");
    if (!picker || !code) return;
    var fallbackName = preview ? preview.textContent : "";

    function show(colour) {
      if (preview) paint(preview, colour);
      if (warning) {
        var text = colour && !readable(colour) ? warning.getAttribute("data-warning") : "";
        if (warning.textContent !== text) warning.textContent = text;
      }
    }

    picker.hidden = false;
    picker.addEventListener("input", function () {
      code.value = picker.value;
      code.removeAttribute("aria-invalid");
      show(picker.value);
    });
    code.addEventListener("input", function () {
      var colour = colourCode(code.value);
      if (colour) picker.value = colour;
      show(colour);
    });
    if (name && preview) {
      // A name typed before this script ran shows at once, later ones as they are typed.
      var showName = function () {
        preview.textContent = name.value.trim() || fallbackName;
      };
      name.addEventListener("input", showName);
      showName();
    }
    var initial = colourCode(code.value);
    if (initial) picker.value = initial;
    show(initial);
  }

  function init() {
    document.querySelectorAll("[data-chip-colour]").forEach(function (chip) {
      paint(chip, chip.getAttribute("data-chip-colour"));
    });
    document.querySelectorAll("[data-colour-field]").forEach(setUpField);
  }

  // For the tests: the same rule as weblib/colors.py, as this page computes it.
  window.tagdeskColours = { contrast: contrast, textColour: textColour, readable: readable };

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
