/* A tag's colour field, the same in both UIs (weblib/templates/weblib/colour_field.html): a
   picker and a #rrggbb text field kept in sync, a live preview chip, a warning when neither
   black nor white text reaches 4.5:1 on the colour (WCAG 2, the rule of weblib/colors.py),
   and the colours of the tag chips of the page that carry data-chip-colour.
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
