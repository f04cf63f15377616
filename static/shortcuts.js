/* Tagdesk: keyboard shortcuts. "/" jumps to the search box on any page that has one. On the
   queries page, as in a mail client: j/k move a row cursor (the row's checkbox takes the
   focus, so it is read out, and the row is outlined), x ticks the row, l opens Add tags,
   z undoes the edit whose Undo is shown, a / Shift+A / r accept the row's first suggested
   tag, all of them, or reject the first, Escape clears the selection, ? lists them all.
   Not while typing in a field, with Ctrl, Alt or Cmd held, or while a dialog is open. */
(function () {
  "use strict";

  var cursorId = null;
  var cursorIndex = -1; // the cursor row's place among the rows, kept for a redraw
  var refreshing = false; // the rows being drawn again after an edit, the view unchanged
  // a, A or r pressed while the last one's answer is on its way is kept, in order, and
  // pressed once the rows are drawn again: on the row with the cursor then (the one that
  // took the accepted row's place), as a mail client keeps keys typed ahead. Pressed at
  // once, the second accepted nothing, and its sentence took the place of the first's Undo.
  var answering = 0; // the suggestion key being answered, numbered (0: none; -1: the next
                     // key typed ahead, about to be pressed)
  var answered = false; // its answer came: the rows drawn next are drawn after it
  var asked = 0;
  var typedAhead = [];
  var TYPED_AHEAD = 20;
  var ANSWER_PATIENCE = 10000; // ms

  function isTyping(element) {
    if (!element || !element.tagName) return false;
    var tag = element.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT" || element.isContentEditable) return true;
    if (tag !== "INPUT") return false;
    return ["checkbox", "radio", "button", "submit", "reset"].indexOf(element.type) === -1;
  }

  function shortcutsDialog() {
    return document.querySelector("[data-shortcuts-dialog]");
  }

  function say(text) {
    var note = document.querySelector("[data-selection-note]");
    if (note && note.textContent !== text) note.textContent = text;
  }

  function showCursor() {
    document.querySelectorAll("tr.row--cursor").forEach(function (row) {
      if (row.id !== cursorId) row.classList.remove("row--cursor");
    });
    var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-row]"));
    var row = cursorId ? document.getElementById(cursorId) : null;
    if (!row && refreshing && cursorIndex >= 0 && rows.length) {
      // The row left the view after an edit (its suggestion accepted, say): the row
      // that took its place takes the cursor, as a mail client's next message does, so that
      // a a a goes down the list. The focus follows only if the edit's button took it along.
      row = rows[Math.min(cursorIndex, rows.length - 1)];
      cursorId = row.id;
      var box = row.querySelector("[data-row-select]");
      if (box && (!document.activeElement || document.activeElement === document.body)) {
        box.focus();
      }
    }
    refreshing = false;
    if (row) {
      row.classList.add("row--cursor");
      cursorIndex = rows.indexOf(row);
    }
    return row;
  }

  function moveCursor(step) {
    var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-row]"));
    if (!rows.length) return;
    var index = rows.indexOf(cursorId ? document.getElementById(cursorId) : null);
    var next = index === -1 ? (step > 0 ? 0 : rows.length - 1)
      : Math.max(0, Math.min(rows.length - 1, index + step));
    cursorId = rows[next].id;
    var row = showCursor();
    var box = row.querySelector("[data-row-select]");
    if (box) box.focus();
    row.scrollIntoView({ block: "nearest" });
  }

  function stopAnswering() {
    answering = 0;
    typedAhead = [];
  }

  // The rows drawn again after a suggestion's answer: the next key typed ahead is pressed
  // once they are painted (keys pressed meanwhile still wait behind it).
  function pressTypedAhead() {
    var next = typedAhead.shift();
    answering = next ? -1 : 0;
    if (!next) return;
    Tagdesk.afterNextPaint(function () {
      answering = 0;
      if (document.querySelector("dialog[open]") || !shortcut(next)) stopAnswering();
    });
  }

  // The rows drawn anew, or one row drawn again in place: the cursor stays on its row.
  // Focus reaching a row's checkbox (by Tab or a click) puts the cursor there too.
  Tagdesk.component("#results", function (results) {
    showCursor();
    if (answering > 0 && answered) pressTypedAhead();  // not rows drawn for another reason
    results.addEventListener("htmx:afterRequest", function (event) {
      var from = event.detail.requestConfig && event.detail.requestConfig.elt;
      var suggestion = from && from.closest(".suggestions");
      if (answering <= 0 || !(suggestion || (from && from.matches("[data-refresh-results]")))) {
        return;
      }
      if (!event.detail.successful) stopAnswering();  // its sentence says why; the keys go
      else if (suggestion) answered = true;
    });
    results.addEventListener("htmx:load", showCursor);
    results.addEventListener("htmx:beforeRequest", function (event) {
      refreshing = event.target.matches("[data-refresh-results]");
    });
    results.addEventListener("focusin", function (event) {
      var row = event.target.matches("[data-row-select]") && event.target.closest("tr[data-row]");
      if (!row) return;
      cursorId = row.id;
      showCursor();
    });
  });

  function selected() {
    var scope = document.querySelector("[data-bulk-scope]");
    return (!!scope && scope.value === "all") ||
      Array.prototype.some.call(document.querySelectorAll("[data-row-select]"),
                                function (box) { return box.checked; });
  }

  function shortcut(key) {
    if (key === "j" || key === "k") {
      moveCursor(key === "j" ? 1 : -1);
    } else if (key === "x") {
      var row = cursorId ? document.getElementById(cursorId) : null;
      var box = row && row.querySelector("[data-row-select]");
      if (!box) return false;
      box.click();
      box.focus();
    } else if (key === "l") {
      // A click the page makes (not trusted): the dialog knows it was opened by key.
      var add = document.querySelector('[data-bulk-action][hx-get$="action=add"]');
      if (!add) {  // no rows, so no Add tags: said, not nothing
        if (!document.getElementById("results")) return false;
        say("No rows to tag here: change the search or the filters.");
      } else if (add.disabled) say("Select a row first: j and k move between rows, x selects one.");
      else add.click();
    } else if (key === "Escape") {
      var results = document.getElementById("results");
      if (!results || !selected()) return false;
      results.dispatchEvent(new CustomEvent("tagdesk:clearSelection"));
      say("Selection cleared.");
    } else if (key === "z") {
      // The edit whose Undo the page shows, and no other: not one whose sentence left with
      // another view or a reload, nor one made in another tab (Activity has their Undo).
      var undo = document.querySelector(
        "#notices [data-edit-notice] button[data-send-shown]:not([disabled])");
      if (undo) undo.click();
      else say("Nothing to undo here: the Activity page lists every edit with its Undo.");
    } else if (key === "a" || key === "A" || key === "r") {
      // The row's suggested tags (where the API suggests them): the first's Accept or
      // Reject, or Accept all (Shift+A), pressed as a click would.
      if (answering) {
        if (typedAhead.length < TYPED_AHEAD) typedAhead.push(key);
        return true;
      }
      var suggested = cursorId ? document.getElementById(cursorId) : null;
      if (!suggested || !suggested.querySelector("[data-suggestion-accept]")) return false;
      var button = suggested.querySelector(key === "r" ? "[data-suggestion-reject]"
        : key === "A" ? "[data-suggestion-accept-all]" : "[data-suggestion-accept]");
      if (!button && key === "A") button = suggested.querySelector("[data-suggestion-accept]");
      var mine = answering = ++asked;
      answered = false;
      // Rows never drawn again (the refresh itself lost): keys work again after a while.
      setTimeout(function () { if (answering === mine) stopAnswering(); }, ANSWER_PATIENCE);
      button.click();
    } else if (key === "?") {
      var dialog = shortcutsDialog();
      if (dialog && !dialog.open) dialog.showModal();
    } else {
      return false;
    }
    return true;
  }

  function jumpToSearch(event) {
    var search = document.querySelector("[data-search]");
    if (!search || isTyping(event.target)) return;
    event.preventDefault();
    // Folded away on a phone (filters-toggle.js).
    var toggle = document.querySelector("[data-filters-toggle]");
    if (toggle) toggle.dispatchEvent(new CustomEvent("tagdesk:show"));
    search.focus();
    search.select();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (event.key === "/") {
      jumpToSearch(event);
      return;
    }
    if (!shortcutsDialog() || isTyping(event.target)) return;
    if (document.querySelector("dialog[open]")) return;
    if (shortcut(event.key)) event.preventDefault();
  });

  Tagdesk.component("[data-shortcuts-open]", function (opener) {
    opener.addEventListener("click", function () {
      var dialog = shortcutsDialog();
      if (dialog && !dialog.open) dialog.showModal();
    });
  });
})();
