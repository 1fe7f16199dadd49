// The Review page and the reviewed history: keyboard shortcuts, and the decision controls.
//
// Navigation keys work everywhere. The decision controls are active only when the page is
// served through the review proxy to a signed-in reviewer allowed to write: the proxy's
// /auth/session then answers {write: true, csrfToken}. A decision is sent as JSON to
// POST /api/review/decisions with the CSRF token; the proxy signs it for the inspector. Each
// card's submission id is random and kept for the page's session, so a retry after a lost answer
// records nothing new. Once recorded, the answer reveals who produced A and B; Enter continues.
"use strict";

(function () {
  var form = document.getElementById("decision");
  var state = { write: false, csrf: null, preferred: null, busy: false, recorded: false };

  function byId(id) {
    return document.getElementById(id);
  }

  function follow(id) {
    var link = byId(id);
    if (link) {
      window.location.assign(link.href);
    }
  }

  function tell(text) {
    var feedback = byId("key-feedback");
    if (feedback) {
      feedback.textContent = text;
    }
  }

  function randomId() {
    // 32 hex digits: a record id (letters and digits), from the browser's CSPRNG.
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    var text = "";
    for (var i = 0; i < bytes.length; i++) {
      text += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
    }
    return text;
  }

  function submissionKey() {
    return "reviewtrail:submission:" + form.dataset.item + ":" + (form.dataset.supersedes || "");
  }

  function submissionId() {
    var key = submissionKey();
    var id = window.sessionStorage.getItem(key);
    if (!id) {
      id = randomId();
      window.sessionStorage.setItem(key, id);
    }
    return id;
  }

  function checked(name) {
    var values = [];
    form.querySelectorAll('input[name="' + name + '"]:checked').forEach(function (box) {
      values.push(box.value);
    });
    return values;
  }

  function enable(session) {
    state.write = true;
    state.csrf = session.csrfToken;
    form.querySelectorAll("fieldset.controls").forEach(function (set) {
      set.disabled = false;
    });
    byId("write-state").textContent = "Signed in as " + session.actor +
      ": decisions are recorded under this reviewer id.";
    byId("write-state").className = "ok";
  }

  function learnSession() {
    if (!form) {
      return;
    }
    window.fetch("/auth/session", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (answer) {
        return answer.ok ? answer.json() : null;
      })
      .then(function (session) {
        if (session && session.write && session.csrfToken) {
          enable(session);
        }
      })
      .catch(function () {
        // The inspector alone has no session route: the page stays read-only.
      });
  }

  function decision(disposition, strength) {
    var body = {
      itemId: form.dataset.item,
      campaignId: form.dataset.campaign,
      campaignVersion: parseInt(form.dataset.version, 10),
      submissionId: submissionId(),
      disposition: disposition,
      reasonCodes: checked("reason"),
      responseTags: checked("tag"),
      useForTraining: byId("training").checked
    };
    if (disposition === "prefer") {
      body.preferred = state.preferred;
      body.strength = strength;
    }
    if (disposition === "correct") {
      body.replacement = byId("correction").value;
    }
    var confidence = byId("confidence").value;
    if (confidence !== "") {
      body.confidence = parseFloat(confidence);
    }
    var note = byId("note").value.trim();
    if (note) {
      body.note = note;
    }
    if (form.dataset.supersedes) {
      body.supersedes = form.dataset.supersedes;
    }
    return body;
  }

  function correctionProblem() {
    var text = byId("correction");
    if (!text.value.trim()) {
      return "the replacement response is empty";
    }
    if (!text.checkValidity()) {
      return "the replacement response is " + text.validationMessage;
    }
    return null;
  }

  function reveal(result) {
    var rows = byId("reveal-rows");
    rows.textContent = "";
    (result.provenance || []).forEach(function (p) {
      var row = document.createElement("tr");
      var named = p.selfIdentification === null || p.selfIdentification === undefined ? "not checked" :
        (p.selfIdentification.length ? p.selfIdentification.join(", ") : "no candidate");
      [p.position, p.agentId, p.model, p.provider, p.executionAdapter, p.learnedAdapter || "none", named]
        .forEach(function (value) {
          var cell = document.createElement("td");
          cell.textContent = value === null || value === undefined ? "" : String(value);
          row.appendChild(cell);
        });
      rows.appendChild(row);
    });
    var use = result.use ? result.use.use + (result.use.reason ? " (" + result.use.reason + ")" : "") : "";
    byId("reveal-summary").textContent = (result.resubmitted ? "Already recorded: " : "Recorded: ") +
      result.disposition + " by " + result.reviewer + ", decision " + result.decisionId +
      (result.notice ? "; " + result.notice : "") + (use ? "; " + use : "") + ".";
    window.sessionStorage.setItem("reviewtrail:last-item", form.dataset.item);
    window.sessionStorage.removeItem(submissionKey());
    state.recorded = true;
    byId("reveal").hidden = false;
    byId("reveal").focus();
    tell("");
  }

  function send(disposition, strength) {
    if (!state.write) {
      tell("Not active: this page is read-only (sign in through the review proxy to decide).");
      return;
    }
    if (state.busy || state.recorded) {
      return;
    }
    if (disposition === "correct") {
      var problem = correctionProblem();
      if (problem) {
        tell("Not sent: " + problem + ".");
        byId("correction").focus();
        return;
      }
    }
    state.busy = true;
    tell("Recording " + disposition + "…");
    window.fetch("/api/review/decisions", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
      body: JSON.stringify(decision(disposition, strength))
    })
      .then(function (answer) {
        return answer.json().then(function (json) {
          return { ok: answer.ok, status: answer.status, json: json };
        });
      })
      .then(function (answer) {
        state.busy = false;
        if (answer.ok) {
          reveal(answer.json);
          return;
        }
        // Refused: nothing was recorded; the next attempt is a new submission.
        window.sessionStorage.removeItem(submissionKey());
        var error = answer.json.error || {};
        tell("Not recorded (" + answer.status + (error.field ? ", " + error.field : "") + "): " +
          (error.message || "refused") + ".");
      })
      .catch(function () {
        state.busy = false;
        tell("No answer: press the key again to retry; the retry cannot record the decision twice.");
      });
  }

  function prefer(position) {
    state.preferred = position;
    byId("strength").hidden = false;
    tell("Prefer " + position + ": now 1 (slight) or 2 (strong); Esc cancels.");
  }

  function onControl(event) {
    var control = event.target.closest("button");
    if (!control || !form.contains(control)) {
      return;
    }
    if (control.dataset.prefer) {
      prefer(control.dataset.prefer);
    } else if (control.dataset.strength) {
      send("prefer", control.dataset.strength);
    } else if (control.dataset.disposition) {
      send(control.dataset.disposition);
    }
  }

  function focusFirst(id) {
    var box = byId(id) && byId(id).querySelector("input");
    if (box) {
      box.focus();
    }
  }

  function inField(event) {
    var tag = event.target && event.target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }

  function fieldKey(event) {
    if (event.key === "Escape") {
      event.target.blur();
      return true;
    }
    if (event.target.id === "correction" && event.key === "Enter" && event.ctrlKey) {
      send("correct");
      return true;
    }
    if (event.target.tagName === "INPUT" && event.target.type !== "checkbox" && event.key === "Enter") {
      event.target.blur();
      return true;
    }
    return false;
  }

  function decisionKey(key) {
    var actions = {
      u: function () { send("underdetermined"); },
      m: function () { send("malformed"); },
      s: function () { send("skip"); },
      t: function () { send("tie"); },
      a: function () { prefer("A"); },
      b: function () { prefer("B"); },
      c: function () { byId("correction").focus(); },
      r: function () { focusFirst("reasons"); },
      g: function () { focusFirst("tags"); },
      f: function () { byId("confidence").focus(); },
      n: function () { byId("note").focus(); },
      y: function () {
        byId("training").checked = !byId("training").checked;
        tell("use for training: " + (byId("training").checked ? "yes" : "no"));
      }
    };
    if ((key === "1" || key === "2") && state.preferred) {
      send("prefer", key === "1" ? "slight" : "strong");
      return true;
    }
    if (key === "Escape" && state.preferred) {
      state.preferred = null;
      byId("strength").hidden = true;
      tell("Preference cancelled.");
      return true;
    }
    if (!actions[key]) {
      return false;
    }
    if (!state.write) {
      tell("Key " + key + " is not active: this page is read-only (sign in through the review proxy to decide).");
      return true;
    }
    actions[key]();
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey) {
      return;
    }
    if (inField(event)) {
      if (fieldKey(event)) {
        event.preventDefault();
      }
      return;
    }
    if (event.ctrlKey) {
      return;
    }
    var handled = true;
    if (state.recorded && (event.key === "Enter" || event.key === "ArrowRight")) {
      follow("continue");
    } else if (event.key === "ArrowRight") {
      follow("next");
    } else if (event.key === "ArrowLeft") {
      follow("prev");
    } else if (event.key === "h") {
      follow("history-link");
    } else if (event.key === "z") {
      var last = window.sessionStorage.getItem("reviewtrail:last-item");
      if (last) {
        window.location.assign("/items/" + encodeURIComponent(last) + "/history#decision");
      } else {
        tell("No decision made in this browser session yet.");
      }
    } else if (event.key === "?") {
      var keys = byId("shortcuts");
      if (keys) {
        keys.focus();
      }
    } else {
      handled = form !== null && !state.recorded && decisionKey(event.key);
    }
    if (handled) {
      event.preventDefault();
    }
  });

  // The status line's counts come from their own JSON route: counting a campaign's items is
  // work the card itself does not need.
  function showProgress() {
    var line = byId("progress");
    if (!line) {
      return;
    }
    window.fetch(line.dataset.src, { headers: { Accept: "application/json" } })
      .then(function (answer) {
        return answer.ok ? answer.json() : null;
      })
      .then(function (progress) {
        if (progress) {
          line.textContent = " · " + progress.decided + " of " + progress.items + " items decided, " +
            progress.open + " open";
          var own = byId("own");
          if (own && progress.own) {
            own.textContent = "you: " + progress.own.decided + " decided, " + progress.own.skipped + " skipped";
          }
        }
      })
      .catch(function () {});
  }

  if (form) {
    form.addEventListener("click", onControl);
  }
  showProgress();
  learnSession();
})();
