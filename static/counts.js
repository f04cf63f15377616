/* Tagdesk: the counts beside every choice of the view form (form[data-counts-url]) and the
   project's progress. One request per view, sent as its rows settle, so that the server
   counts while the browser paints the rows; its answer is painted only after the rows' frame,
   so that the rows never wait for it. Asked again after an edit (tagdesk:bulkDone), the
   answer read afresh then and after a job's end (tagdesk:resultsStale); rows drawn again
   after edits wait for the edits to pause. One small JSON answer fills the ~450 places in
   one pass (docs/decisions.md). */
(function () {
  "use strict";

  var request = null;
  var fresh = false;
  // The rows drawn again after an edit, and again after the next in a run (a, a, a…): their
  // counts are asked once the edits pause, not after each (one facets call, not one an edit).
  var PAUSE_MS = 1000;
  var pausing = null;

  // Each place shows the count of its option's input (by the input's name and value), or the
  // one it names (data-count-name, data-count-value); the answer has each field's counts by
  // name and value (dashboard/filter_fields.py, `counts`), a missing one is 0.
  function paint(form, counts, search) {
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
    form.setAttribute("data-counted", search);
    var progress = document.querySelector("[data-progress]");
    if (progress && counts.progress) progress.innerHTML = counts.progress.html;
  }

  // A task after the next frame: painted then, the counts do not hold up that frame.
  function afterTheFrame() {
    return new Promise(function (resolve) {
      Tagdesk.afterNextPaint(resolve);
    });
  }

  // `wait`: a promise to settle before the answer is painted.
  function load(wait) {
    clearTimeout(pausing);
    pausing = null;
    var form = document.querySelector("form[data-view-form][data-counts-url]");
    if (!form || !window.fetch) return;
    if (request) request.abort();
    var mine = request = new AbortController();
    var headers = { "Accept": "application/json" };
    if (fresh) headers["X-Tagdesk-Refresh"] = "1";
    fresh = false;
    var search = Tagdesk.viewSearch();
    var answer = fetch(form.getAttribute("data-counts-url") + search,
                       { headers: headers, credentials: "same-origin", signal: mine.signal })
      .then(function (response) { return response.status === 200 ? response.json() : null; });
    Promise.all([answer, wait])
      .then(function (both) {
        if (request !== mine) return;  // a newer view's counts are on their way
        request = null;
        if (both[0]) paint(form, both[0], search);
      })
      .catch(function () { /* no counts this time: the page works without them */ });
  }

  Tagdesk.component("form[data-view-form][data-counts-url]", function () { load(null); });

  // New rows: their counts asked for at once, painted a task after the rows' frame (painted
  // while the browser lays out the rows, they would delay them). The rows of the page's
  // first load come with the form.
  var first = true;
  Tagdesk.component("#results", function (results) {
    if (first) {
      first = false;
      return;
    }
    results.addEventListener("htmx:afterSettle", function (event) {
      if (event.target !== results) return;
      var asked = event.detail.requestConfig && event.detail.requestConfig.elt;
      if (asked && asked.matches("[data-refresh-results]")) {
        clearTimeout(pausing);
        pausing = setTimeout(function () { load(null); }, PAUSE_MS);
      } else {
        load(afterTheFrame());
      }
    }, { once: true });
  });

  document.addEventListener("tagdesk:bulkDone", function () {
    fresh = true;
    load(null);
  });
  document.addEventListener("tagdesk:resultsStale", function () { fresh = true; });
})();
