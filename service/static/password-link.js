/* Tagdesk organization settings: the page a one-time link opens (/settings/password#<token>).
   The token is in the fragment, which browsers never send to a server, so it never reaches a
   request line, an access log or a proxy's log. This script moves it into the page's form,
   takes it out of the address bar (and so out of the history), and sends the form: the token
   travels in the body of a POST. Without JavaScript the person pastes the link into the form's
   field and presses Continue. Loaded from this site only (no inline script). */
(function () {
  "use strict";

  function init() {
    var form = document.getElementById("open-link");
    var field = document.getElementById("link");
    if (!form || !field || window.location.hash.length < 2) return;
    field.value = window.location.hash.slice(1);
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
    form.hidden = true;
    var waiting = document.getElementById("opening");
    if (waiting) waiting.hidden = false;
    form.submit();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
  // A link pasted into the address bar of this page only changes its fragment.
  window.addEventListener("hashchange", init);
})();
