/* Tagdesk: small progressive enhancements on top of htmx, one module per component. Every
   page works without them (plain links and GET forms). Each module registers its component
   here with the selector of its root element; this file binds it to each such element on
   the page and in everything htmx swaps in later (htmx.onLoad), once per element. A
   component keeps its state to itself and listens on its own root; components speak to one
   another only through the page (events dispatched on another's root, attributes).
   No inline script anywhere: the Content-Security-Policy allows only 'self'. */
(function () {
  "use strict";

  var kinds = [];

  // One walk of the new content for every kind (new rows come with each change of view),
  // then each kind binds its elements in the order of the page.
  function bindAll(root) {
    if (!root || !root.querySelectorAll || !kinds.length) return;
    var any = kinds.map(function (kind) { return kind.selector; }).join(", ");
    var found = Array.prototype.slice.call(root.querySelectorAll(any));
    if (root.matches(any)) found.unshift(root);
    kinds.forEach(function (kind) {
      found.forEach(function (element) {
        if (!element.matches(kind.selector) || kind.bound.has(element)) return;
        kind.bound.add(element);
        kind.bind(element);
      });
    });
  }

  window.Tagdesk = {
    // bind(element) sets up one element matching `selector`, when it first appears.
    component: function (selector, bind) {
      kinds.push({ selector: selector, bind: bind, bound: new WeakSet() });
    },
    // Once the next frame is painted: work that would otherwise delay it.
    afterNextPaint: function (callback) {
      requestAnimationFrame(function () { setTimeout(callback, 0); });
    }
  };

  if (window.htmx) window.htmx.onLoad(bindAll);
})();
