/* Tagdesk: Enter in the tag picker dialog ([data-bulk-form][data-picker], not the confirm
   step): Enter on the tag the finder names (its exact name, or the only tag it matches) ticks
   it; Enter again, or Enter on a ticked tag, applies; Ctrl+Enter applies from anywhere in the
   picker. What Enter did is said in the picker's live region. */
(function () {
  "use strict";

  Tagdesk.component("[data-bulk-form][data-picker]", function (form) {
    function say(text) {
      var said = form.querySelector("[data-picker-said]");
      if (said) said.textContent = text;
    }

    function apply() {
      var button = form.querySelector("[data-picker-apply]");
      if (button && !button.disabled) button.click();
    }

    function tick(box) {
      box.checked = true;
      box.dispatchEvent(new Event("change", { bubbles: true }));
      var chip = box.closest("label").querySelector(".chip");
      var name = chip ? chip.textContent.trim() : box.getAttribute("aria-label") || "";
      say("\u2018" + name + "\u2019 ticked. Enter applies; or type another tag.");
    }

    // The picker (picker.js) creates the tag when no tag has the name and it offers to.
    function created() {
      return !form.dispatchEvent(new CustomEvent("tagdesk:create", { cancelable: true }));
    }

    function enterInFinder(find) {
      if (created()) return;
      var name = find.value.trim();
      if (name === "") {
        if (form.querySelector('input[name="apply_tag"]:checked')) apply();
        else say("Type a tag\u2019s name: Enter ticks it.");
        return;
      }
      var shown = Array.prototype.filter.call(form.querySelectorAll("[data-option]"),
                                              function (option) { return !option.hidden; });
      var exact = shown.filter(function (option) {
        return option.getAttribute("data-option") === name.toLowerCase();
      });
      var named = exact.length ? exact[0] : (shown.length === 1 ? shown[0] : null);
      if (!named) {
        say(shown.length ? shown.length + " tags match \u201c" + name +
          "\u201d: type more of the name, or Tab to them." : "No tag matches \u201c" + name + "\u201d.");
        return;
      }
      var box = named.querySelector('input[type="checkbox"]');
      if (box.checked) {
        apply();
        return;
      }
      tick(box);
      find.value = ""; // ready for another name
      find.dispatchEvent(new Event("input", { bubbles: true }));
    }

    // Whether the key was used (a button's own Enter is left to it).
    function enter(target, applyNow, repeated) {
      if (applyNow) {
        if (!repeated) apply();
        return true;
      }
      if (target.matches("[data-picker-find]")) {
        if (!repeated) enterInFinder(target);
        return true;
      }
      if (target.matches('input[type="checkbox"]')) {
        if (repeated) return true;
        if (target.checked) apply();
        else tick(target);
        return true;
      }
      return false;
    }

    form.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      if (enter(event.target, event.ctrlKey || event.metaKey, event.repeat)) {
        event.preventDefault();
      }
    });
  });
})();
