/* Tagdesk: small progressive enhancements on top of htmx. Every page works without this
   file (plain links and GET forms); with it, filters apply as you choose them, "/" jumps to
   the search box, Esc clears it, and busy-service banners retry by themselves.
   No inline script anywhere: the Content-Security-Policy allows only 'self'. */
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  /* --- CSRF: a header on every htmx request that changes something ------------------- */

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  function setCsrfToken(token) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) meta.setAttribute("content", token);
    document.querySelectorAll('input[name="csrf_token"]').forEach(function (input) {
      input.value = token;
    });
  }

  document.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.verb !== "get") {
      event.detail.headers["X-CSRFToken"] = csrfToken();
    }
  });

  // After an expired token the server answers with a fresh one: no button stays dead.
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail.xhr;
    var token = xhr && xhr.getResponseHeader("X-CSRFToken");
    if (token) setCsrfToken(token);
  });

  /* --- keyboard: "/" focuses the search box, Esc clears it ---------------------------- */

  function isTyping(element) {
    if (!element || !element.tagName) return false;
    var tag = element.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT" || element.isContentEditable) return true;
    if (tag !== "INPUT") return false;
    return ["checkbox", "radio", "button", "submit", "reset"].indexOf(element.type) === -1;
  }

  function closePickers(except) {
    document.querySelectorAll("details[data-picker][open]").forEach(function (details) {
      if (details !== except) details.open = false;
    });
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey) {
      if (isTyping(target)) return;
      var search = document.querySelector("[data-search]");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
    } else if (event.key === "Escape") {
      if (target.matches && target.matches("[data-search]")) {
        event.preventDefault();
        if (target.value !== "") {
          target.value = "";
          target.dispatchEvent(new Event("input", { bubbles: true }));
        }
        return;
      }
      var open = target.closest && target.closest("details[data-picker][open]");
      if (open) {
        open.open = false;
        open.querySelector("summary").focus();
      }
    } else if (event.key === "Enter" && target.matches && target.matches("[data-picker-find]")) {
      event.preventDefault(); // typing in a picker's finder never submits the filters
    }
  });

  /* --- filters: only real choices trigger a search ------------------------------------ */

  // The search box searches as you type ("input"); its "change" on blur would repeat the same
  // request. The pickers' finders only narrow a list. Neither should reach the form.
  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("[data-search], [data-picker-find]")) {
      event.stopPropagation();
    }
  }, true);

  function updatePickerCount(picker) {
    var count = picker.querySelectorAll('input[type="checkbox"]:checked').length;
    var badge = picker.querySelector("[data-picker-count]");
    if (!badge) return;
    badge.hidden = count === 0;
    var number = badge.querySelector("[data-number]");
    if (number) number.textContent = String(count);
  }

  document.addEventListener("change", function (event) {
    var picker = event.target.closest && event.target.closest("[data-picker]");
    if (picker) updatePickerCount(picker);
  });

  // A picker's finder narrows its list of checkboxes.
  document.addEventListener("input", function (event) {
    var find = event.target;
    if (!find.matches || !find.matches("[data-picker-find]")) return;
    var needle = find.value.trim().toLowerCase();
    var picker = find.closest("[data-picker]");
    var shown = 0;
    picker.querySelectorAll("[data-option]").forEach(function (option) {
      var match = needle === "" || option.getAttribute("data-option").indexOf(needle) !== -1;
      option.hidden = !match;
      if (match) shown += 1;
    });
    picker.querySelectorAll(".picker__group").forEach(function (group) {
      group.hidden = !group.querySelector("[data-option]:not([hidden])");
    });
    var none = picker.querySelector("[data-picker-none]");
    if (none) none.hidden = shown > 0;
  });

  // One picker open at a time; it closes when you click or tab away from it.
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!details.matches || !details.matches("details[data-picker]") || !details.open) return;
    closePickers(details);
    var find = details.querySelector("[data-picker-find]");
    if (find && !find.hidden) find.focus();
  }, true);

  document.addEventListener("click", function (event) {
    document.querySelectorAll("details[data-picker][open]").forEach(function (details) {
      if (!details.contains(event.target)) details.open = false;
    });
  });

  document.addEventListener("focusout", function (event) {
    var details = event.target.closest && event.target.closest("details[data-picker][open]");
    if (details && event.relatedTarget && !details.contains(event.relatedTarget)) {
      details.open = false;
    }
  });

  // Links in the results (sort, pages, removing a filter) change the view without the form:
  // afterwards the form shows what the URL says, so the next choice starts from the truth.
  function syncFormWithUrl(form) {
    var params = new URLSearchParams(window.location.search);
    Array.prototype.forEach.call(form.elements, function (element) {
      if (!element.name || element.name === "csrf_token") return;
      var values = params.getAll(element.name).map(function (v) { return v.toLowerCase(); });
      var fallback = element.getAttribute("data-default") || "";
      if (element.type === "checkbox") {
        element.checked = values.indexOf(element.value.toLowerCase()) !== -1;
      } else if (element.tagName === "SELECT" || element.type === "hidden" ||
                 element.type === "search" || element.type === "text") {
        var value = params.get(element.name);
        element.value = value === null ? fallback : value;
      }
    });
    form.querySelectorAll("[data-picker]").forEach(updatePickerCount);
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    var source = event.detail.requestConfig && event.detail.requestConfig.elt;
    var form = document.querySelector("form[data-view-form]");
    if (!form || !source || form.contains(source)) return;
    syncFormWithUrl(form);
  });

  /* --- selection (bulk editing builds on this) ---------------------------------------- */

  function updateSelection(root) {
    var table = root.querySelector ? root : document;
    var boxes = table.querySelectorAll("[data-row-select]");
    var checked = table.querySelectorAll("[data-row-select]:checked").length;
    document.querySelectorAll("[data-selected-count]").forEach(function (counter) {
      counter.textContent = String(checked);
    });
    document.querySelectorAll("[data-select-all]").forEach(function (all) {
      all.checked = boxes.length > 0 && checked === boxes.length;
      all.indeterminate = checked > 0 && checked < boxes.length;
    });
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches && target.matches("[data-select-all]")) {
      document.querySelectorAll("[data-row-select]").forEach(function (box) {
        box.checked = target.checked;
      });
      updateSelection(document);
    } else if (target.matches && target.matches("[data-row-select]")) {
      updateSelection(document);
    }
  });

  /* --- banners that retry by themselves ----------------------------------------------- */

  function armRetry(element) {
    if (element.getAttribute("data-armed")) return;
    var url = element.getAttribute("data-retry-url") || "";
    if (url.charAt(0) !== "/" || url.charAt(1) === "/" || url.charAt(1) === "\\") return;
    element.setAttribute("data-armed", "1");
    var left = parseInt(element.getAttribute("data-retry-after"), 10) || 5;
    var countdown = element.querySelector("[data-countdown]");
    var timer = window.setInterval(function () {
      if (!document.body.contains(element)) {
        window.clearInterval(timer);
        return;
      }
      left -= 1;
      if (left <= 0) {
        window.clearInterval(timer);
        if (countdown) countdown.textContent = "now";
        window.location.assign(url);
        return;
      }
      if (countdown) countdown.textContent = "in " + left + (left === 1 ? " second" : " seconds");
    }, 1000);
  }

  /* --- set up a page or a freshly swapped part of it ---------------------------------- */

  function init(root) {
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll("[data-picker-find]").forEach(function (find) { find.hidden = false; });
    if (root.matches && root.matches("[data-retry-after]")) armRetry(root);
    root.querySelectorAll("[data-retry-after]").forEach(armRetry);
    updateSelection(document);
  }

  document.addEventListener("htmx:load", function (event) { init(event.detail.elt); });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { init(document); });
  } else {
    init(document);
  }
})();
