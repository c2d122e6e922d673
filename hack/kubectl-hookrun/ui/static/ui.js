// kubectl hookrun ui: the page's only script (the Content-Security-Policy
// allows no other). It copies sample calls, submits the namespace picker,
// asks before destructive actions (and says so to the server) and keeps an Agent's cards live: on each
// "change" event of the server's stream it fetches the cards again (the
// server renders and escapes them) and puts them in place.
"use strict";

(function () {
  function copyButtons(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (b) {
      b.addEventListener("click", function () {
        var id = b.getAttribute("data-copy");
        var source = document.getElementById(id);
        if (!source || !navigator.clipboard) return;
        // A live refresh may replace the card before the clipboard
        // answers: the answer goes on the button then in the page.
        function shown() {
          return b.isConnected ? b : document.querySelector('button[data-copy="' + CSS.escape(id) + '"]') || b;
        }
        navigator.clipboard.writeText(source.textContent).then(function () {
          var now = shown();
          now.textContent = "Copied";
          now.classList.add("copied");
        }, function (e) {
          var now = shown();
          now.textContent = "Copy failed";
          now.title = e.message;
        });
      });
    });
  }

  function confirmForms(root) {
    root.querySelectorAll("form[data-confirm]").forEach(function (f) {
      f.addEventListener("submit", function (ev) {
        if (!window.confirm(f.getAttribute("data-confirm"))) {
          ev.preventDefault();
          return;
        }
        // Asked: the server asks again on a page of its own only when a
        // browser without script sends the form.
        if (f.elements.confirmed) f.elements.confirmed.value = "yes";
      });
    });
  }

  function wire(root) {
    copyButtons(root);
    confirmForms(root);
  }

  function live(section) {
    var status = document.getElementById("live");
    var busy = false, again = false;
    function say(state, text) {
      if (!status) return;
      status.setAttribute("data-state", state);
      status.textContent = text;
    }
    function refresh() {
      if (busy) { again = true; return; }
      busy = true;
      fetch(section.getAttribute("data-endpoints"), { credentials: "same-origin" })
        .then(function (r) {
          if (!r.ok) throw new Error(r.status + " " + r.statusText);
          return r.text();
        })
        .then(function (html) {
          section.innerHTML = html;
          wire(section);
          section.setAttribute("data-updated", String(Date.now()));
        })
        .catch(function (e) { say("failed", "Live updates: " + e.message); })
        .finally(function () {
          busy = false;
          if (again) { again = false; refresh(); }
        });
    }
    var events = new EventSource(section.getAttribute("data-events"));
    events.addEventListener("ready", function () { say("live", "Live updates: on"); });
    events.addEventListener("change", refresh);
    events.addEventListener("failure", function (ev) {
      say("failed", ev.data);
      events.close();
    });
    events.onerror = function () { say("connecting", "Live updates: reconnecting…"); };
  }

  document.addEventListener("DOMContentLoaded", function () {
    wire(document);
    document.querySelectorAll("select[data-autosubmit]").forEach(function (s) {
      s.addEventListener("change", function () { s.form.submit(); });
    });
    var section = document.getElementById("endpoints");
    if (section && section.hasAttribute("data-events")) live(section);
  });
})();
