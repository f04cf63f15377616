/* Tagdesk: Undo within reach of the keyboard, and what travels with it. Once an edit's
   sentence arrives in the notice area (#notices, a live region, so it is read out), focus
   goes to its Undo (or to the sentence when there is nothing to undo); after Undo, to the
   sentence that says what Undo did. Undo ([data-send-shown]) tells which rows the page
   shows, so that only those are swapped back in. A job's panel can be dismissed. */
(function () {
  "use strict";

  Tagdesk.component("#notices", function (notices) {
    notices.addEventListener("htmx:load", function (event) {
      var notice = event.target.closest("[data-edit-notice]");
      // data-keep-focus: an accepted suggestion's sentence, whose Undo is z (the keys stay
      // on the rows).
      if (!notice || !notices.contains(notice) || notice.hasAttribute("data-keep-focus")) return;
      var undo = notice.querySelector("button[data-send-shown]:not([disabled])");
      (undo || notice).focus();
    });

    // Undo (from the sentence) went through: the selection stays.
    notices.addEventListener("tagdesk:bulkDone", function () {
      var results = document.getElementById("results");
      if (results) {
        results.dispatchEvent(new CustomEvent("tagdesk:editDone", { detail: { keep: true } }));
      }
    });
  });

  Tagdesk.component("[data-send-shown]", function (undo) {
    undo.addEventListener("htmx:configRequest", function (event) {
      var ids = Array.prototype.map.call(document.querySelectorAll("tr[data-row]"), function (row) {
        return row.id.replace(/^row-/, "");
      });
      event.detail.parameters.shown = ids.join(",");
    });
  });

  Tagdesk.component("[data-dismiss]", function (dismiss) {
    dismiss.addEventListener("click", function () {
      var panel = dismiss.closest("[data-job]");
      if (panel) panel.remove();
    });
  });
})();
