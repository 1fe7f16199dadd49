// The Review page and the reviewed history: keyboard shortcuts, and the decision controls.
//
// Navigation keys work everywhere. The decision controls are active only when the page is
// served through the review proxy to a signed-in reviewer allowed to write: the proxy's
// /auth/session then answers {write: true, csrfToken}. A decision is sent as JSON to
// POST /api/review/decisions with the CSRF token; the proxy signs it for the inspector. Each
// card's submission id is random and kept for the page's session, so a retry after a lost answer
// records nothing new. Once recorded, the answer reveals who produced A and B; Enter continues.
//
// A single-key disposition (u, m, s, t, or its button) only arms the decision: Enter (or the
// "record" button) sends it, Esc (or "cancel") drops it. Nothing is sent before the confirmation,
// so a stray key or a closed tab records nothing. A preference is two keys already (a or b, then
// 1 or 2): the strength key records it.
"use strict";

(function () {
  var form = null;
  var state = null;
  var session = null; // the write session, learned once per page load and kept across drawn cards
  var upcoming = null; // the next card's page, fetched while the reveal is read
  var FRESH_MS = 15000; // an older fetch of the next card is fetched again

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

  function enable(found) {
    session = found;
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
      .then(function (found) {
        if (found && found.write && found.csrfToken) {
          enable(found);
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
    var note = byId("note").value.replace(/^\s+|\s+$/g, "");
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

  // What the reviewer chose, in the page's words: "prefer B, strong", "tie", "skip".
  function choice(sent) {
    if (!sent) {
      return "";
    }
    if (sent.disposition === "prefer") {
      return "prefer " + sent.preferred + " (candidate " + sent.preferred + "), " + sent.strength;
    }
    return sent.disposition;
  }

  function reveal(result) {
    var rows = byId("reveal-rows");
    rows.textContent = "";
    (result.provenance || []).forEach(function (p) {
      var row = document.createElement("tr");
      var named = p.selfIdentification === null || p.selfIdentification === undefined ? "not checked" :
        (p.selfIdentification.length ? p.selfIdentification.join(", ") : "no candidate");
      // A producer the reveal gate withholds: its position and when it is shown, nothing else.
      (p.withheld ? [p.position, "withheld: " + p.withheld] :
        [p.position, p.agentId, p.model, p.provider, p.executionAdapter, p.learnedAdapter || "none", named])
        .forEach(function (value) {
          var cell = document.createElement("td");
          cell.textContent = value === null || value === undefined ? "" : String(value);
          row.appendChild(cell);
        });
      rows.appendChild(row);
    });
    var use = result.use ? result.use.use + (result.use.reason ? " (" + result.use.reason + ")" : "") : "";
    var chosen = state.sent && state.sent.disposition === result.disposition ? choice(state.sent) : result.disposition;
    byId("reveal-summary").textContent = (result.resubmitted ? "Already recorded: " : "Recorded: ") +
      chosen + " by " + result.reviewer + ", decision " + result.decisionId +
      (result.notice ? "; " + result.notice : "") + (use ? "; " + use : "") + ".";
    window.sessionStorage.setItem("reviewtrail:last-item", form.dataset.item);
    window.sessionStorage.removeItem(submissionKey());
    state.recorded = true;
    byId("reveal").hidden = false;
    byId("reveal").focus();
    // after the reveal's frame: the next card's request would compete with drawing it
    window.requestAnimationFrame(function () {
      window.setTimeout(fetchNext, 0);
    });
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
    state.sent = { disposition: disposition, preferred: state.preferred, strength: strength || null };
    disarm();
    tell("Recording " + choice(state.sent) + "…");
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

  // A single-key disposition waits for Enter (the confirmation) or Esc.
  function arm(disposition) {
    if (!state.write) {
      tell("Not active: this page is read-only (sign in through the review proxy to decide).");
      return;
    }
    if (state.busy || state.recorded) {
      return;
    }
    state.preferred = null;
    byId("strength").hidden = true;
    state.armed = disposition;
    byId("confirm-text").textContent = "Record " + disposition + "?";
    byId("confirm").hidden = false;
    tell(disposition + ": Enter records it, Esc cancels.");
  }

  function disarm() {
    state.armed = null;
    var box = byId("confirm");
    if (box) {
      box.hidden = true;
    }
  }

  function confirmArmed() {
    var disposition = state.armed;
    if (disposition) {
      send(disposition);
    }
  }

  function cancelArmed() {
    disarm();
    tell("Cancelled: nothing was recorded.");
  }

  function prefer(position) {
    disarm();
    state.preferred = position;
    byId("strength").hidden = false;
    tell("Prefer " + position + ": now 1 (slight) or 2 (strong); Esc cancels.");
  }

  function onControl(event) {
    var control = event.target.closest("button");
    if (!control || !form.contains(control)) {
      return;
    }
    if (control.id === "confirm-yes") {
      confirmArmed();
    } else if (control.id === "confirm-no") {
      cancelArmed();
    } else if (control.dataset.prefer) {
      prefer(control.dataset.prefer);
    } else if (control.dataset.strength) {
      send("prefer", control.dataset.strength);
    } else if (control.dataset.disposition === "correct") {
      send("correct");
    } else if (control.dataset.disposition) {
      arm(control.dataset.disposition);
    }
  }

  // The details (correction, reasons, tags, confidence, training, note) fold away under the bar;
  // their keys unfold them first.
  function unfold() {
    var more = byId("more");
    if (more) {
      more.open = true;
    }
  }

  function focusOn(id) {
    unfold();
    byId(id).focus();
  }

  function focusFirst(id) {
    unfold();
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
      u: function () { arm("underdetermined"); },
      m: function () { arm("malformed"); },
      s: function () { arm("skip"); },
      t: function () { arm("tie"); },
      a: function () { prefer("A"); },
      b: function () { prefer("B"); },
      c: function () { focusOn("correction"); },
      r: function () { focusFirst("reasons"); },
      g: function () { focusFirst("tags"); },
      f: function () { focusOn("confidence"); },
      n: function () { focusOn("note"); },
      y: function () {
        unfold();
        byId("training").checked = !byId("training").checked;
        tell("use for training: " + (byId("training").checked ? "yes" : "no"));
      }
    };
    if (state.armed && key === "Enter") {
      confirmArmed();
      return true;
    }
    if (state.armed && key === "Escape") {
      cancelArmed();
      return true;
    }
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
      continueOn();
    } else if (event.key === "ArrowRight") {
      follow("next");
    } else if (event.key === "ArrowLeft") {
      follow("prev");
    } else if (event.key === "h") {
      follow("history-link");
    } else if (event.key === "z") {
      var last = window.sessionStorage.getItem("reviewtrail:last-item");
      if (last) {
        window.location.assign("/items/" + encodeURIComponent(last) + "/history?change=1#decision");
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

  // The criterion's instructions are open on every card unless the reviewer folded them away in
  // this browser session; a fold holds from card to card.
  function keepCriterionFold() {
    var criterion = byId("criterion");
    if (!criterion) {
      return;
    }
    if (window.sessionStorage.getItem("reviewtrail:criterion") === "closed") {
      criterion.open = false;
    }
    criterion.addEventListener("toggle", function () {
      window.sessionStorage.setItem("reviewtrail:criterion", criterion.open ? "open" : "closed");
    });
  }

  // The next card, drawn in place: once a decision is revealed, the page fetches the card that
  // "continue" leads to (the next open one, now that this one is decided) while the reviewer
  // reads the reveal; Enter swaps the new card's <main> in, with the address it has, and keeps
  // the write session. A page that is not a Review card, or a failed fetch, is navigated to.
  function loadPage(href) {
    return window.fetch(href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (answer) {
        return answer.ok ? answer.text() : null;
      })
      .catch(function () {
        return null;
      });
  }

  // A fetched page, parsed ahead of the key: its title and <main>, or null if it is no Review card.
  function parsed(text) {
    var next = text && new window.DOMParser().parseFromString(text, "text/html");
    var main = next && next.querySelector("main");
    if (!main || !next.body.classList.contains("review-page")) {
      return null;
    }
    return { title: next.title, main: main };
  }

  function fetchNext() {
    var link = byId("continue");
    if (link && document.body.classList.contains("review-page")) {
      upcoming = { href: link.href, at: Date.now(), card: loadPage(link.href).then(parsed) };
    }
  }

  function drawCard(next, href) {
    if (!next) {
      return false;
    }
    document.querySelector("main").replaceWith(document.adoptNode(next.main));
    document.title = next.title;
    window.history.pushState({ drawn: true }, "", href);
    window.scrollTo(0, 0);
    initCard();
    var title = byId("item-title");
    if (title) {
      title.focus(); // a screen reader reads the new card's item line; keys work as on a loaded page
    }
    return true;
  }

  function continueOn() {
    var link = byId("continue");
    if (!link || state.leaving) {
      return;
    }
    state.leaving = true;
    var href = link.href;
    if (!document.body.classList.contains("review-page")) {
      window.location.assign(href);
      return;
    }
    var fresh = upcoming && upcoming.href === href && Date.now() - upcoming.at < FRESH_MS;
    var card = fresh ? upcoming.card : loadPage(href).then(parsed);
    upcoming = null;
    card.then(function (next) {
      if (!drawCard(next, href)) {
        window.location.assign(href);
      }
    });
  }

  // Everything a card needs once it is drawn, on a page load or in place.
  function initCard() {
    form = byId("decision");
    state = { write: false, csrf: null, preferred: null, armed: null, sent: null, busy: false, recorded: false, leaving: false };
    if (form) {
      form.addEventListener("click", onControl);
    }
    keepCriterionFold();
    window.requestAnimationFrame(function () {
      window.setTimeout(showProgress, 0); // after the card's first frame
    });
    if (session) {
      enable(session);
    } else {
      learnSession();
    }
  }

  // Back and forward over cards drawn in place: the page at that address, loaded.
  window.addEventListener("popstate", function () {
    window.location.reload();
  });
  initCard();
})();
