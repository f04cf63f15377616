/* Tagdesk: choosing rows in the results (#results) for a bulk edit: a checkbox per row,
   shift-click for a range, "select all on this page", "select all N matching" and the
   toolbar that follows them; a row's quick edit. Other parts of the page speak to it with
   events on #results: tagdesk:editDone (an edit went through: keep the selection or clear
   it) and tagdesk:clearSelection (the Escape shortcut). */
(function () {
  "use strict";

  Tagdesk.component("#results", function (results) {
    var lastClicked = null;

    function boxes() {
      return Array.prototype.slice.call(results.querySelectorAll("[data-row-select]"));
    }

    function scope() {
      return results.querySelector("[data-bulk-scope]");
    }

    function update() {
      var all = boxes();
      var checked = all.filter(function (box) { return box.checked; }).length;
      var toolbar = results.querySelector("[data-bulk-toolbar]");
      var whole = all.length > 0 && checked === all.length;
      if (scope() && !whole) scope().value = "page";
      var everything = !!scope() && scope().value === "all";
      var totalText = toolbar ? toolbar.getAttribute("data-total-text") : "";
      var total = toolbar ? parseInt(toolbar.getAttribute("data-total"), 10) || 0 : 0;
      results.querySelectorAll("[data-selected-count]").forEach(function (counter) {
        counter.textContent = everything ? "All " + totalText : String(checked);
      });
      results.querySelectorAll("[data-select-all]").forEach(function (box) {
        box.checked = whole;
        box.indeterminate = checked > 0 && checked < all.length;
      });
      var note = document.querySelector("[data-selection-note]");
      if (checked > 0 && note && note.textContent !== "") note.textContent = "";
      if (!toolbar) return;
      toolbar.classList.toggle("bulk-toolbar--active", checked > 0);
      var across = toolbar.querySelector("[data-select-across]");
      if (across) across.hidden = !(whole && total > all.length && !everything);
      var clear = toolbar.querySelector("[data-clear-selection]");
      if (clear) clear.hidden = checked === 0;
      toolbar.querySelectorAll("[data-bulk-action]").forEach(function (button) {
        button.disabled = checked === 0;
      });
    }

    function clear() {
      boxes().forEach(function (box) { box.checked = false; });
      if (scope()) scope().value = "page";
      update();
    }

    update();
    // A row drawn again in place (after an edit, an undo, a quick edit).
    results.addEventListener("htmx:load", update);
    results.addEventListener("tagdesk:clearSelection", clear);
    results.addEventListener("tagdesk:editDone", function (event) {
      if (event.detail && event.detail.keep) update();
      else clear();
    });

    // A row drawn again in place keeps the tick it had: the selection is the person's,
    // whatever the server drew.
    results.addEventListener("htmx:oobBeforeSwap", function (event) {
      var target = event.detail.target;
      var fragment = event.detail.fragment;
      if (!target.matches("tr[data-row]") || !fragment || !fragment.querySelector) return;
      var was = target.querySelector("[data-row-select]");
      var box = fragment.querySelector("[data-row-select]");
      if (!was || !box) return;
      box.checked = was.checked;
      if (was.checked) box.setAttribute("checked", "");
      else box.removeAttribute("checked");
    });

    // After a job, the rows are loaded again (the hidden [data-refresh-results] in the
    // results), unless the person is in the middle of choosing rows.
    results.addEventListener("htmx:confirm", function (event) {
      if (!event.target.matches("[data-refresh-results]")) return;
      var dialog = document.querySelector("[data-bulk-dialog]");
      if ((dialog && dialog.open) || boxes().some(function (box) { return box.checked; })) {
        event.preventDefault();
      }
    });

    results.addEventListener("change", function (event) {
      var target = event.target;
      if (target.matches("[data-select-all]")) {
        boxes().forEach(function (box) { box.checked = target.checked; });
        update();
      } else if (target.matches("[data-row-select]")) {
        update();
      }
    });

    results.addEventListener("click", function (event) {
      var target = event.target;
      // Shift-click: every box between the last one clicked and this one takes its state.
      if (target.matches("[data-row-select]")) {
        var all = boxes();
        if (event.shiftKey && lastClicked && lastClicked !== target &&
            all.indexOf(lastClicked) !== -1) {
          var from = all.indexOf(lastClicked);
          var to = all.indexOf(target);
          for (var i = Math.min(from, to); i <= Math.max(from, to); i += 1) {
            all[i].checked = target.checked;
          }
          update();
        }
        lastClicked = target;
        return;
      }
      var button = target.closest("button");
      if (!button) return;
      if (button.matches("[data-select-across]")) {
        if (scope()) scope().value = "all";
        update();
        var clearButton = results.querySelector("[data-clear-selection]");
        if (clearButton) clearButton.focus();
      } else if (button.matches("[data-clear-selection]")) {
        clear();
      } else if (button.matches("[data-row-edit]")) {
        quickEdit(button);
      }
    });
  });

  // A row's quick edit: the picker is asked for that row (its checkbox's value is its
  // identity) and the tags it has now (the button's data-had); the table's body says where
  // (data-edit-url), and that this is no new history entry.
  function quickEdit(button) {
    var body = button.closest("[data-edit-url]");
    var row = button.closest("tr[data-row]");
    var box = row && row.querySelector("[data-row-select]");
    if (!body || !box || !window.htmx) return;
    var had = (button.getAttribute("data-had") || "").split(" ").filter(Boolean);
    window.htmx.ajax("GET", body.getAttribute("data-edit-url"), {
      source: button, target: "[data-bulk-dialog-body]", swap: "innerHTML",
      values: { row: box.value, had: had }
    });
  }
})();
