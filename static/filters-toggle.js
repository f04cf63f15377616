/* Tagdesk: on a phone the filters and saved views would fill the first screen: they fold
   behind a disclosure button, "Filters (n)" (CSS folds them only below 640 px, and only with
   script), which names how many filters the results say are in use. */
(function () {
  "use strict";

  Tagdesk.component("[data-filters-toggle]", function (toggle) {
    function show(shown) {
      toggle.setAttribute("aria-expanded", shown ? "true" : "false");
      document.documentElement.classList.toggle("filters-shown", shown);
    }

    toggle.removeAttribute("data-unbound");  // seen, and pressed, from now on
    toggle.addEventListener("click", function () {
      show(toggle.getAttribute("aria-expanded") !== "true");
    });
    // "/" jumps to the search box (shortcuts.js).
    toggle.addEventListener("tagdesk:show", function () { show(true); });
  });

  Tagdesk.component("#results", function (results) {
    var count = document.querySelector("[data-filters-toggle] [data-filters-count]");
    if (!count) return;
    var used = results.querySelectorAll(".active-filters__list > li").length;
    var text = used ? " (" + used + ")" : "";
    if (count.textContent !== text) count.textContent = text;
  });
})();
