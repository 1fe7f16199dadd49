// The Review page's keyboard shortcuts. Navigation keys move between cards and to the item's
// history; the decision keys are listed but not active while the inspector is read-only.
"use strict";

(function () {
  function follow(id) {
    var link = document.getElementById(id);
    if (link) {
      window.location.assign(link.href);
    }
  }

  function tell(text) {
    var feedback = document.getElementById("key-feedback");
    if (feedback) {
      feedback.textContent = text;
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
      return;
    }
    if (event.key === "ArrowRight") {
      follow("next");
    } else if (event.key === "ArrowLeft") {
      follow("prev");
    } else if (event.key === "h") {
      follow("history-link");
    } else if (event.key === "?") {
      var keys = document.getElementById("shortcuts");
      if (keys) {
        keys.focus();
      }
    } else {
      var control = document.querySelector('[data-key="' + CSS.escape(event.key) + '"]');
      if (!control) {
        return;
      }
      tell("Key " + event.key + " (" + control.textContent.trim().replace(/\s+\S+$/, "") +
        ") is not active: this inspector is read-only.");
    }
    event.preventDefault();
  });
})();
