// XCE dashboard: refresh the live part of the page in place, and confirm actions.
// The only script of the dashboard; it talks to the controller that served it and nothing else.
(function () {
  "use strict";

  document.addEventListener("submit", function (e) {
    var question = e.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      e.preventDefault();
    }
  });

  var live = document.getElementById("live");
  var status = document.getElementById("live-status");
  var every = live ? Number(live.getAttribute("data-refresh") || 0) * 1000 : 0;
  if (!every) {
    return;
  }
  var busy = false;
  var stopped = false;
  var timer = null;

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  function refresh() {
    if (busy || stopped || document.hidden) {
      return;
    }
    busy = true;
    fetch(window.location.href, {headers: {"X-XCE-Fragment": "1"}, credentials: "same-origin", cache: "no-store",
                                 redirect: "error"})
      .then(function (r) {
        if (r.status === 401) {
          stopped = true;
          window.clearInterval(timer);
          say("Your session has ended: reload the page to log in again.");
          return null;
        }
        if (!r.ok && r.status !== 404 && r.status !== 400) {
          throw new Error("HTTP " + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        if (html !== null) {
          live.innerHTML = html;
          live.setAttribute("data-updated", String(Date.now()));
          say("Updated " + new Date().toLocaleTimeString());
        }
      })
      .catch(function (err) {
        say("Cannot reach the controller (" + err.message + "); retrying.");
      })
      .then(function () {
        busy = false;
      });
  }

  timer = window.setInterval(refresh, every);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) {
      refresh();
    }
  });
})();
