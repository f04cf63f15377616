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
    var params = new URLSearchParams(window.location.search);
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

  // Untagged, Exclude, Any/All (the API's extension, when offered). Untagged clears the
  // included tags and an included tag clears Untagged; a tag is included or excluded, not
  // both. Capture phase: before htmx reads the form in its own "change" listener.
  Tagdesk.component("[data-tag-picker]", function (picker) {
    function showMatch() {
      var match = picker.querySelector("[data-tag-match]");
      if (match) match.hidden = picker.querySelectorAll("[data-include]:checked").length < 2;
    }

    showMatch();
    picker.addEventListener("tagdesk:synced", showMatch);
    picker.addEventListener("change", function (event) {
      var box = event.target;
      if (box.type !== "checkbox" || !box.checked) return;
      if (box.matches("[data-untagged]")) {
        picker.querySelectorAll("[data-include]:checked").forEach(function (other) {
          other.checked = false;
        });
      } else if (box.matches("[data-include], [data-exclude]")) {
        var untagged = picker.querySelector("[data-untagged]");
        if (untagged && box.matches("[data-include]")) untagged.checked = false;
        var row = box.closest(".option-row");
        var twin = row && row.querySelector(box.matches("[data-include]") ? "[data-exclude]" : "[data-include]");
        if (twin) twin.checked = false;
      }
      showMatch();
    }, true);
  });
})();
