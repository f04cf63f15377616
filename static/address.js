/* Tagdesk: the address follows the view. htmx decides which answers change it (hx-push-url,
   the HX-Push-Url header) and says so (htmx:pushedIntoHistory), but makes no history call of
   its own (historyEnabled is off in the page's htmx config): it made two per change, and a
   pushState costs Chromium ~4 ms of the page's main thread in the middle of the swap. Here
   the new entry is pushed once, a task after the new content's frame is painted; until then
   Tagdesk.viewSearch() is the query string of the view on screen. Every entry carries
   {htmx: true}, the page's first one from the first change on, so that Back and Forward
   reach htmx, which loads the page for that address from the server (refreshOnHistoryMiss). */
(function () {
  "use strict";

  var pending = null;

  function push() {
    var path = pending;
    pending = null;
    if (!history.state || !history.state.htmx) history.replaceState({ htmx: true }, "");
    history.pushState({ htmx: true }, "", path);
  }

  document.addEventListener("htmx:pushedIntoHistory", function (event) {
    var waiting = pending !== null;
    pending = event.detail.path;  // two changes before a frame: one entry, for the last
    if (waiting) return;
    // A hidden page paints no frame (and runs no animation frame) until it is shown again.
    if (document.visibilityState === "hidden") push();
    else Tagdesk.afterNextPaint(push);
  });

  // The query string of the view on screen, its address pushed or about to be.
  Tagdesk.viewSearch = function () {
    if (pending === null) return window.location.search;
    return new URL(pending, window.location.href).search;
  };
})();
