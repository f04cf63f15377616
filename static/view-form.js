/* Tagdesk: the form that chooses a view ([data-view-form]): only real choices trigger a
   search; Esc clears the search box; the tag picker's choices that cannot hold together are
   undone before the form is read; and after a link in the results changed the view (sort,
   pages, removing a filter), the form shows what the address says, so that the next choice
   starts from the truth. */
(function () {
  "use strict";

  // The search box searches as you type ("input"); its "change" on blur would repeat the
  // same request.
  Tagdesk.component("[data-search]", function (search) {
    search.addEventListener("change", function (event) { event.stopPropagation(); });
    search.addEventListener("keydown", function (event) {
      if (event.key !== "Escape") return;
      event.preventDefault();
      if (search.value === "") return;
      search.value = "";
      search.dispatchEvent(new Event("input", { bubbles: true }));
    });
  });

  function syncWithUrl(form) {
    var params = new URLSearchParams(Tagdesk.viewSearch());
    Array.prototype.forEach.call(form.elements, function (element) {
      if (!element.name || element.name === "csrf_token") return;
      var values = params.getAll(element.name).map(function (v) { return v.toLowerCase(); });
      var fallback = element.getAttribute("data-default") || "";
      if (element.type === "checkbox") {
        element.checked = values.indexOf(element.value.toLowerCase()) !== -1;
      } else if (element.type === "radio") {
        element.checked = values.length ? values[0] === element.value
                                         : element.hasAttribute("data-default");
      } else if (element.tagName === "SELECT" || element.type === "hidden" ||
                 element.type === "search" || element.type === "text") {
        var value = params.get(element.name);
        element.value = value === null ? fallback : value;
      }
    });
    form.querySelectorAll("[data-picker]").forEach(function (picker) {
      picker.dispatchEvent(new CustomEvent("tagdesk:synced"));
    });
  }

  // New results, asked for by something else than the form.
  Tagdesk.component("#results", function (results) {
    results.addEventListener("htmx:afterSettle", function (event) {
      if (event.target !== results) return;
      var source = event.detail.requestConfig && event.detail.requestConfig.elt;
      var form = document.querySelector("form[data-view-form]");
      if (form && source && !form.contains(source)) syncWithUrl(form);
    }, { once: true });
  });

  // A box with data-clears="selector" unticks, when ticked, the boxes of its picker that the
  // selector finds: the picker's template declares which choices cannot hold together. On the
  // box itself: before the picker counts its choices and htmx reads the form, both in their
  // own "change" listeners further up.
  Tagdesk.component("[data-clears]", function (box) {
    box.addEventListener("change", function () {
      if (!box.checked) return;
      var scope = box.closest("[data-picker]") || box.form || document;
      scope.querySelectorAll(box.getAttribute("data-clears")).forEach(function (other) {
        if (other !== box) other.checked = false;
      });
    });
  });

  // How the included tags combine (Any/All, the API's extension, when offered): shown with two
  // or more included.
  Tagdesk.component("[data-tag-picker]", function (picker) {
    function showMatch() {
      var match = picker.querySelector("[data-tag-match]");
      if (match) match.hidden = picker.querySelectorAll("[data-include]:checked").length < 2;
    }

    showMatch();
    picker.addEventListener("tagdesk:synced", showMatch);
    picker.addEventListener("change", showMatch);
  });
})();
