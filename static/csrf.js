/* Tagdesk: the CSRF token rides as a header on every htmx request that changes something, read
   from the page's meta tag; after an expired token the server answers with a fresh one,
   which replaces the old everywhere on the page: no button stays dead. */
(function () {
  "use strict";

  function meta() {
    return document.querySelector('meta[name="csrf-token"]');
  }

  document.addEventListener("htmx:configRequest", function (event) {
    var tag = meta();
    if (event.detail.verb !== "get") {
      event.detail.headers["X-CSRFToken"] = tag ? tag.getAttribute("content") : "";
    }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail.xhr;
    var token = xhr && xhr.getResponseHeader("X-CSRFToken");
    if (!token) return;
    var tag = meta();
    if (tag) tag.setAttribute("content", token);
    document.querySelectorAll('input[name="csrf_token"]').forEach(function (input) {
      input.value = token;
    });
  });
})();
