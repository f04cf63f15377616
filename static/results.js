/* Tagdesk: the results (#results) drawn anew — another page, sort or filter, a refresh.
   - Focus: a control in the results that had the focus (Next, a column's sort, a filter's
     remove link, a row's checkbox) leaves with the old results. The focus leaves it first:
     removing the focused element made Chromium lay the new rows out inside the swap (~12 ms
     of every Next and sort). Once the new rows are painted, it comes back to the same
     control in the new results (same kind, text, name and rel), or, when there is none (the
     filter removed, Next on the last page), to the results' heading.
   - A selection covers the rows of one page: when rows that were ticked are drawn anew, a
     sentence in a live region says so, instead of the ticks vanishing silently.
   - The old rows go first, in one step: htmx's clean-up of what it replaces visits every old
     element with two events each (some 800 for 50 rows, ~12 ms), and no row holds anything
     htmx set up (the quick edit is one handler on the results, selection.js). */
(function () {
  "use strict";

  var refocus = null;
  var droppedSelection = false;

  function ticked(results) {
    var scope = results.querySelector("[data-bulk-scope]");
    return (!!scope && scope.value === "all") ||
      Array.prototype.some.call(results.querySelectorAll("[data-row-select]"),
                                function (box) { return box.checked; });
  }

  // An answer aimed at the results that swaps nothing there (hx-swap "none": a suggestion's
  // Accept or Reject, whose rows come with the refresh after it, or its error) leaves the
  // rows in place.
  function swapsNothing(event) {
    var asked = event.detail.requestConfig && event.detail.requestConfig.elt;
    var from = asked && asked.closest("[hx-swap]");
    var swap = event.detail.swapOverride || (from ? from.getAttribute("hx-swap") : "");
    return /^none\b/.test(swap || "");
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var results = event.detail.target;
    if (!results || results.id !== "results" || swapsNothing(event)) return;
    droppedSelection = ticked(results);
    if (!event.detail.shouldSwap) return;
    var active = document.activeElement;
    if (active && active !== document.body && results.contains(active)) {
      refocus = {
        tag: active.tagName,
        text: active.textContent.trim(),
        label: active.getAttribute("aria-label"),
        rel: active.getAttribute("rel")
      };
      active.blur();
    }
    var rows = results.querySelector("tbody[data-edit-url]");
    if (rows) rows.replaceChildren();
  });

  function sameControl(root, was) {
    var candidates = root.getElementsByTagName(was.tag);
    for (var i = 0; i < candidates.length; i++) {
      var each = candidates[i];
      if (each.textContent.trim() === was.text && each.getAttribute("aria-label") === was.label &&
          each.getAttribute("rel") === was.rel) return each;
    }
    return null;
  }

  function announceDroppedSelection(results) {
    var note = document.querySelector("[data-selection-note]");
    droppedSelection = false;
    if (!note) return;
    var toolbar = results.querySelector("[data-bulk-toolbar]");
    var more = toolbar ? "use \u201cSelect all " + toolbar.getAttribute("data-total-text") +
      " matching\u201d for more" : "select the rows again to edit them";
    note.textContent = "Selection cleared: it covers one page; " + more + ".";
  }

  Tagdesk.component("#results", function (results) {
    if (droppedSelection) announceDroppedSelection(results);
    var was = refocus;
    if (!was) return;
    refocus = null;
    Tagdesk.afterNextPaint(function () {
      var here = document.getElementById("results");
      if (!here || document.activeElement !== document.body) return;
      var control = sameControl(here, was) || here.querySelector("#results-heading");
      if (control) control.focus({ preventScroll: true });
    });
  });
})();
