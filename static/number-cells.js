/* Tagdesk: the number cells of a result row (table[data-number-columns]). A row drawn again
   after an edit comes without them (the edit's answer carries no numbers): it keeps the
   cells the row had, so that the table's columns stay in line. */
(function () {
  "use strict";

  Tagdesk.component("table[data-number-columns]", function (table) {
    table.addEventListener("htmx:oobBeforeSwap", function (event) {
      var old = event.detail.target;
      var fragment = event.detail.fragment;
      if (!old || !old.matches || !old.matches("tr[data-row]") || !fragment) return;
      var fresh = fragment.querySelector("tr[data-row]");
      if (!fresh || fresh.querySelector("[data-number]")) return;
      var before = fresh.querySelector(".col-updated");
      old.querySelectorAll("td[data-number]").forEach(function (cell) {
        fresh.insertBefore(cell.cloneNode(true), before);
      });
    });
  });
})();
