/* Tagdesk: a busy-service banner ([data-retry-after]) counts down and tries again by itself,
   going to its retry address (one of this site's paths) when the time is up. */
(function () {
  "use strict";

  function isOwnPath(url) {
    return url.charAt(0) === "/" && url.charAt(1) !== "/" && url.charAt(1) !== "\\";
  }

  Tagdesk.component("[data-retry-after]", function (banner) {
    var url = banner.getAttribute("data-retry-url") || "";
    if (!isOwnPath(url)) return;
    var left = parseInt(banner.getAttribute("data-retry-after"), 10) || 5;
    var countdown = banner.querySelector("[data-countdown]");
    var timer = window.setInterval(function () {
      if (!document.body.contains(banner)) {
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
  });
})();
