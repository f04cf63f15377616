/* Tagdesk: dialogs. Any dialog's [data-dialog-close] closes it. The bulk edit dialog
   ([data-bulk-dialog]) opens when the tag picker or the confirm step arrives in it, names the
   queries the edit will change, closes when the edit went through or failed, and then tells
   the results (tagdesk:editDone) whether the selection stays. */
(function () {
  "use strict";

  Tagdesk.component("dialog", function (dialog) {
    dialog.addEventListener("click", function (event) {
      if (event.target.closest("[data-dialog-close]")) dialog.close();
    });
  });

  var VERBS = { add: "Add tags to ", remove: "Remove tags from ",
    replace: "Replace the tags of " };

  // Which queries the edit will change, by name: ticks made earlier (say, with x on rows the
  // cursor has left since) are not changed unawares. Many: the first three and how many more.
  function describeSelection(action) {
    var toolbar = document.querySelector("[data-bulk-toolbar]");
    var scope = document.querySelector("[data-bulk-scope]");
    if (toolbar && scope && scope.value === "all") {
      return "For all " + toolbar.getAttribute("data-total-text") +
        " queries that match this view. You will be asked to confirm.";
    }
    var names = Array.prototype.filter.call(document.querySelectorAll("[data-row-select]"),
      function (box) { return box.checked; }).map(function (box) {
        var cell = box.closest("tr[data-row]").querySelector(".col-query");
        return "\u201c" + (cell ? cell.textContent.trim() : "") + "\u201d";
      });
    var count = names.length;
    var listed = count > 5 ? names.slice(0, 3).join(", ") + " and " + (count - 3) + " more"
      : names.join(", ");
    return (VERBS[action] || "For ") + count + (count === 1 ? " query: " : " queries: ") +
      listed + ".";
  }

  Tagdesk.component("[data-bulk-dialog]", function (dialog) {
    // Opened with the l shortcut (a click the page made, not the person): the rows ticked
    // with x are behind the cursor, out of sight, and the next j x l would tag them again.
    // A keyboard edit ends its selection (Undo, z, stays).
    var openedByKey = false;

    // The picker (or the confirm step) arrived: show the dialog.
    dialog.addEventListener("htmx:afterSwap", function (event) {
      var body = event.detail.target;
      if (!body.matches("[data-bulk-dialog-body]")) return;
      var config = event.detail.requestConfig || {};
      var opener = config.elt;
      if (opener && opener.matches && opener.matches("[data-bulk-action], [data-row-edit]")) {
        openedByKey = !!config.triggeringEvent && !config.triggeringEvent.isTrusted;
      }
      var summary = body.querySelector("[data-selection-summary]");
      var action = body.querySelector('input[name="action"]');
      if (summary) {
        summary.textContent = describeSelection(action && action.value) + " " +
          summary.textContent;
      }
      if (!dialog.open) dialog.showModal();
      var first = body.querySelector("[data-picker-find], [data-confirm-sentence] ~ .dialog__actions .button--primary");
      if (first) first.focus();
      // A picker drawn again after creating a tag: go on typing after the name.
      if (first && first.value && first.setSelectionRange) {
        first.setSelectionRange(first.value.length, first.value.length);
      }
    });

    // A failure of a request made from the dialog (the service is busy, the session
    // expired) is a sentence in the page's notice area: close the dialog so it can be read.
    dialog.addEventListener("htmx:beforeSwap", function (event) {
      var target = event.detail.target;
      if (event.detail.shouldSwap && target && target.id === "notices" && dialog.open) {
        dialog.close();
      }
    });

    // The picker is not a form to submit: Enter in it does nothing (Apply does the work).
    dialog.addEventListener("submit", function (event) {
      if (event.target.matches("[data-bulk-form]")) event.preventDefault();
    });

    // An edit went through: close the dialog; keep the selection for a next edit, unless
    // the edit was of everything matching (or came from the keyboard).
    dialog.addEventListener("tagdesk:bulkDone", function (event) {
      var keep = !!(event.detail && event.detail.keepSelection) && !openedByKey;
      openedByKey = false;
      if (dialog.open) dialog.close();
      var results = document.getElementById("results");
      if (results) {
        results.dispatchEvent(new CustomEvent("tagdesk:editDone", { detail: { keep: keep } }));
      }
    });
  });
})();
