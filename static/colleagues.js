/* Tagdesk: rows changed under the person on the queries page (another person's edit, a job,
   a rule, a merge). The [data-colleagues] element polls with htmx (hx-trigger "every Ns");
   this module gives each question the rows on screen ("id@updatedAt,…"), keeps quiet while the
   tab is hidden or the page's own request is on its way, and makes Show draw the rows again.
   No row moves until Show. */
(function () {
  "use strict";

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("#results tr[data-row]"));
  }

  // Rows the page's own job changed while the person kept rows ticked (the rows are then
  // left as they are): their new times, taken in without a word, by row id.
  var taken = {};

  function versionOf(row) {
    if (Object.prototype.hasOwnProperty.call(taken, row.id)) return taken[row.id];
    var time = row.querySelector("time[datetime]");
    return time ? time.getAttribute("datetime") : "";
  }

  function versions() {
    var seen = {};
    rows().forEach(function (row) { seen[row.id] = versionOf(row); });
    return seen;
  }

  // The page's own requests (an edit, a refresh after a job) change rows it then draws
  // again: a question asked meanwhile would count them as someone else's.
  function pageBusy(own) {
    var busy = Array.prototype.some.call(document.querySelectorAll(".htmx-request"),
      function (element) { return element !== own; });
    return busy || document.querySelector("#jobs .job--queued, #jobs .job--running") !== null;
  }

  // Which drawing of the rows a question was asked about: an answer about rows drawn since
  // is dropped.
  var drawing = 0;
  var askedAbout = -1;
  // The page's own job has just ended: the next answer is its own changes, not a colleague's.
  var ownJobEnded = false;

  document.addEventListener("tagdesk:resultsStale", function () { ownJobEnded = true; });

  function takeIn(answer) {
    var holder = document.createElement("div");
    holder.innerHTML = answer;
    var notice = holder.querySelector("[data-changed]");
    (notice ? notice.getAttribute("data-changed").split(",") : []).forEach(function (item) {
      var at = item.indexOf("@");
      taken["row-" + item.slice(0, at)] = item.slice(at + 1);
    });
  }

  Tagdesk.component("[data-colleagues]", function (own) {
    own.addEventListener("htmx:configRequest", function (event) {
      if (event.detail.elt !== own) return;
      var shown = rows().map(function (row) {
        return row.id.replace(/^row-/, "") + "@" + versionOf(row);
      });
      if (document.visibilityState !== "visible" || !shown.length || pageBusy(own)) {
        event.preventDefault();
        return;
      }
      event.detail.parameters.shown = shown.join(",");
      askedAbout = drawing;
    });

    own.addEventListener("htmx:beforeSwap", function (event) {
      if (event.detail.elt !== own) return;
      var fresh = event.detail.serverResponse || "";
      // A question that failed (the service busy, a lost connection) says nothing; the next
      // one asks again.
      if (event.detail.isError || askedAbout !== drawing) {
        event.detail.shouldSwap = false;
      } else if (ownJobEnded) {
        ownJobEnded = false;
        takeIn(fresh);
        event.detail.shouldSwap = false;
      } else if (fresh.trim() === own.innerHTML.trim()) {
        // The same sentence again is not swapped, so it is not read out again.
        event.detail.shouldSwap = false;
      }
    });

    // Show: the same view drawn again, without a history entry. The rows that changed are
    // marked, and focus goes to the first of them (else to the results' heading), not lost
    // with the button that goes away.
    own.addEventListener("click", function (event) {
      var show = event.target.closest("[data-colleagues-show]");
      if (!show || !window.htmx) return;
      var before = versions();
      show.disabled = true;
      window.htmx.ajax("GET", window.location.pathname + window.location.search, {
        target: "#results", swap: "outerHTML", headers: { "X-Tagdesk-Refresh": "1" }
      }).then(function () {
        var changed = rows().filter(function (row) { return before[row.id] !== versionOf(row); });
        changed.forEach(function (row) { row.classList.add("row--changed"); });
        var box = changed.length ? changed[0].querySelector("[data-row-select]") : null;
        var focus = box || document.getElementById("results-heading");
        if (focus) focus.focus();
      });
    });
  });

  // The rows were drawn again (a filter, a page, Show): what was said is out of date.
  var firstDrawing = true;
  Tagdesk.component("#results", function () {
    if (firstDrawing) {
      firstDrawing = false;
      return;
    }
    drawing += 1;
    ownJobEnded = false;
    taken = {};
    var own = document.querySelector("[data-colleagues]");
    if (own) own.innerHTML = "";
  });

  // Back in view: ask at once rather than at the next tick.
  document.addEventListener("visibilitychange", function () {
    var own = document.querySelector("[data-colleagues]");
    if (own && document.visibilityState === "visible" && window.htmx) {
      window.htmx.trigger(own, "colleagues:check");
    }
  });
})();
