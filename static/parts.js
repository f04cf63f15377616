/* Tagdesk: a part of a page drawn again by htmx from a control inside it leaves the focus
   where the answer says to look, once the new part is painted, instead of on the page's body
   or on a button below a sentence out of sight.
   - The rule form refused (Preview or Save rule): its sentences (role="alert",
     tabindex="-1"), scrolled into view; the pattern field, when refused, is marked
     aria-invalid and described by its sentence.
   - Saved views after Save, Rename, Delete or Undo: the Undo a delete offers, else the
     section's sentence (what happened, or why not), so Tab goes on from there.
   A part drawn again for another reason (the saved views' counts after an edit) leaves the
   focus alone. */
(function () {
  "use strict";

  var PARTS = "#rule-form-body, #saved-views";
  var refocusPart = null;

  function partFocus(root) {
    if (root.id === "rule-form-body") return root.querySelector("[data-form-problems]");
    return root.querySelector(".saved-views__note button:not([disabled])") ||
      root.querySelector(".saved-views__note");
  }

  Tagdesk.component(PARTS, function (part) {
    part.addEventListener("htmx:beforeSwap", function (event) {
      var elt = event.detail.requestConfig && event.detail.requestConfig.elt;
      if (event.detail.shouldSwap && event.detail.target === part && elt && elt !== part) {
        refocusPart = part.id;
      }
    });
    if (refocusPart !== part.id) return;
    refocusPart = null;
    Tagdesk.afterNextPaint(function () {
      var here = document.getElementById(part.id);
      var control = here && partFocus(here);
      if (!control) return;
      control.focus({ preventScroll: true });
      // Out of sight (above, as a refusal at the top of a long form): to the middle of the
      // screen, clear of a sticky notice area; in sight: left where it is.
      var box = control.getBoundingClientRect();
      if (box.top < 0 || box.bottom > window.innerHeight) control.scrollIntoView({ block: "center" });
    });
  });

  // Saved views: a save keeps the view on screen now, and the section drawn again after an
  // edit counts for the view on screen now.
  Tagdesk.component("#saved-views", function (section) {
    section.addEventListener("submit", function (event) {
      if (!event.target.matches("[data-save-view]")) return;
      event.target.querySelectorAll("[data-current-view]").forEach(function (input) {
        input.value = Tagdesk.viewSearch();
      });
    }, true);
    section.addEventListener("htmx:configRequest", function (event) {
      if (event.detail.elt === section) event.detail.parameters.view = Tagdesk.viewSearch();
    });
  });
})();
