/* Tagdesk: the counts beside every choice of the view form (form[data-counts-url]) and the
   project's progress. One request per view, sent once its rows are painted: the rows never
   wait for it. Asked again after an edit (tagdesk:bulkDone), the answer read afresh then and
   after a job's end (tagdesk:resultsStale). One small JSON answer fills the ~450 places in
   one pass (docs/decisions.md). */
(function () {
  "use strict";

  var request = null;
  var fresh = false;

  // Each place shows the count of its option's input (by the input's name and value), or the
  // one it names (data-count-name, data-count-value); the answer has each field's counts by
  // name and value (dashboard/filter_fields.py, `counts`), a missing one is 0.
  function paint(form, counts) {
    form.querySelectorAll("[data-count]").forEach(function (place) {
      var input = place.parentNode.querySelector("input");
      var name = place.getAttribute("data-count-name") || (input && input.name);
      if (!name) return;
      var value = place.getAttribute("data-count-value") || (input ? input.value : "");
      var text = (counts[name] || {})[value] || "0";
      if (place.textContent === text) return;  // untouched: nothing to lay out again
      place.textContent = text;
      if (input) place.parentNode.classList.toggle("option--zero", text === "0");
    });
    form.setAttribute("data-counted", window.location.search);
    var progress = document.querySelector("[data-progress]");
    if (progress && counts.progress) progress.innerHTML = counts.progress.html;
  }

  function load() {
    var form = document.querySelector("form[data-view-form][data-counts-url]");
    if (!form || !window.fetch) return;
    if (request) request.abort();
    var mine = request = new AbortController();
    var headers = { "Accept": "application/json" };
    if (fresh) headers["X-Tagdesk-Refresh"] = "1";
    fresh = false;
    fetch(form.getAttribute("data-counts-url") + window.location.search,
          { headers: headers, credentials: "same-origin", signal: mine.signal })
      .then(function (response) { return response.status === 200 ? response.json() : null; })
      .then(function (counts) {
        if (request === mine) request = null;
        if (counts) paint(form, counts);
      })
      .catch(function () { /* no counts this time: the page works without them */ });
  }

  Tagdesk.component("form[data-view-form][data-counts-url]", load);

  // New rows: their counts once they are painted (painted while the browser lays out the
  // rows, they would delay them), a task after the frame's other work. The rows of the
  // page's first load come with the form.
  var first = true;
  Tagdesk.component("#results", function (results) {
    if (first) {
      first = false;
      return;
    }
    results.addEventListener("htmx:afterSettle", function (event) {
      if (event.target === results) {
        Tagdesk.afterNextPaint(function () { setTimeout(load, 0); });
      }
    }, { once: true });
  });

  document.addEventListener("tagdesk:bulkDone", function () {
    fresh = true;
    load();
  });
  document.addEventListener("tagdesk:resultsStale", function () { fresh = true; });
})();
