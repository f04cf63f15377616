/* Tagdesk: a picker ([data-picker]): a list of checkboxes with a finder that narrows it, a
   badge counting the ticked ones and, where the page offers it, "Create tag “name”" for a
   name no tag has. The filters' pickers are disclosures (<details>): one open at a time,
   closed by Escape, by a click outside or by moving the focus to another control. */
(function () {
  "use strict";

  // Narrows the list to the options whose name holds the finder's text; where the picker
  // offers to create a tag, a name no tag has (whatever its case) offers "Create tag “name”".
  function filter(picker, find) {
    var name = find.value.trim();
    var needle = name.toLowerCase();
    var shown = 0;
    var exact = false;
    picker.querySelectorAll("[data-option]").forEach(function (option) {
      var value = option.getAttribute("data-option");
      var match = needle === "" || value.indexOf(needle) !== -1;
      option.hidden = !match;
      if (match) shown += 1;
      if (value === needle) exact = true;
    });
    picker.querySelectorAll(".picker__group").forEach(function (group) {
      group.hidden = !group.querySelector("[data-option]:not([hidden])");
    });
    var none = picker.querySelector("[data-picker-none]");
    if (none) none.hidden = shown > 0;
    var createRow = picker.querySelector("[data-picker-create-row]");
    if (createRow) {
      createRow.hidden = name === "" || exact;
      // One text node: its accessible name is exactly Create tag “name”.
      var button = createRow.querySelector("[data-picker-create]");
      if (button) button.textContent = "Create tag \u201c" + name + "\u201d";
    }
    picker.setAttribute("data-shown", String(shown));
  }

  // "Create tag “…”", when it is offered and no tag matches the finder.
  function createButton(picker) {
    if (picker.getAttribute("data-shown") !== "0") return null;
    var createRow = picker.querySelector("[data-picker-create-row]");
    if (!createRow || createRow.hidden) return null;
    var button = createRow.querySelector("[data-picker-create]");
    return button && !button.disabled ? button : null;
  }

  function updateCount(picker) {
    var badge = picker.querySelector("[data-picker-count]");
    if (!badge) return;
    var count = picker.querySelectorAll('input[type="checkbox"]:checked').length;
    badge.hidden = count === 0;
    var number = badge.querySelector("[data-number]");
    if (number) number.textContent = String(count);
  }

  function isFinder(element) {
    return element.matches && element.matches("[data-picker-find]");
  }

  Tagdesk.component("[data-picker]", function (picker) {
    var find = picker.querySelector("[data-picker-find]");
    if (find) {
      find.hidden = false;
      if (find.value) filter(picker, find); // a picker drawn again after creating a tag
      // The finder only narrows the list: its "change" never reaches the form (a search).
      find.addEventListener("change", function (event) { event.stopPropagation(); });
    }

    picker.addEventListener("input", function (event) {
      if (isFinder(event.target)) filter(picker, event.target);
    });
    picker.addEventListener("change", function () { updateCount(picker); });
    // Its form drawn to match the address again (view-form.js).
    picker.addEventListener("tagdesk:synced", function () { updateCount(picker); });

    // Typing in the finder never submits a form. When no tag matches and the picker offers
    // to create one, Enter creates it (the tag picker dialog has its own Enter: tag-apply.js).
    picker.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" || !isFinder(event.target) || picker.matches("[data-bulk-form]")) {
        return;
      }
      event.preventDefault();
      var create = createButton(picker);
      if (create && !event.repeat) create.click();
    });
    // Asked by the tag picker dialog's Enter: creates the tag when that is on offer, and
    // says so by cancelling the event.
    picker.addEventListener("tagdesk:create", function (event) {
      var create = createButton(picker);
      if (!create) return;
      event.preventDefault();
      create.click();
    });

    // "Create tag" sends the finder's text as the new tag's name.
    picker.addEventListener("htmx:configRequest", function (event) {
      if (!event.detail.elt.matches("[data-picker-create]")) return;
      event.detail.parameters.name = find ? find.value.trim() : "";
    });

    // "Use “name”": a name the project has already was typed; tick that tag instead.
    picker.addEventListener("click", function (event) {
      var use = event.target.closest("[data-use-tag]");
      if (!use) return;
      var box = picker.querySelector('input[name="apply_tag"][value="' +
                                     use.getAttribute("data-use-tag") + '"]');
      if (!box) return;
      box.checked = true;
      if (find) {
        find.value = "";
        filter(picker, find);
      }
      var notice = use.closest(".notice");
      if (notice) notice.textContent = use.textContent.replace(/^Use /, "") + " is ticked, ready to apply.";
      box.focus();
    });

    if (picker.matches("details")) disclosure(picker, find);
  });

  function closeOpen(except) {
    document.querySelectorAll("details[data-picker][open]").forEach(function (details) {
      if (details !== except) details.open = false;
    });
  }

  function disclosure(details, find) {
    details.addEventListener("toggle", function () {
      if (!details.open) return;
      closeOpen(details);
      if (find && !find.hidden) find.focus();
    });

    details.addEventListener("keydown", function (event) {
      if (event.key !== "Escape" || !details.open) return;
      event.preventDefault(); // closing the picker is all Escape does here
      details.open = false;
      details.querySelector("summary").focus();
    });

    // Only focus moving to another control closes it. Pressing an option's text moves the
    // focus to the nearest focusable ancestor (<main tabindex="-1">): closing then, between
    // the press and the click, left the label's click to a checkbox in a closed <details>,
    // and Chromium's tab crashed. A click outside closes the picker (below) instead.
    details.addEventListener("focusout", function (event) {
      var next = event.relatedTarget;
      if (details.open && next && !details.contains(next) && !next.contains(details)) {
        details.open = false;
      }
    });
  }

  document.addEventListener("click", function (event) {
    document.querySelectorAll("details[data-picker][open]").forEach(function (details) {
      if (!details.contains(event.target)) details.open = false;
    });
  });
})();
