// The cockpit works without this script; it adds a checkbox that selects
// every row of the queue's page for a bulk approval, and keeps the queue
// live: every few seconds it asks whether the queue changed and, when it
// did, puts the new list in place and says how many items are new.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  bindSelectAll();
  liveQueue();
});

function bindSelectAll() {
  var all = document.getElementById("select-all");
  if (!all) {
    return;
  }
  all.hidden = false;
  all.addEventListener("change", function () {
    document.querySelectorAll("input.pick").forEach(function (box) {
      box.checked = all.checked;
    });
  });
}

// liveQueue polls /ui/queue/live with the page's filter and the version of
// the list it shows: 204 while nothing changed, else the new list. A
// person in the middle of something (a box ticked, the focus in the list)
// is not interrupted: the notice offers the new list instead.
function liveQueue() {
  var region = document.getElementById("queue-live");
  var notice = document.getElementById("live");
  if (!region || !notice || !window.fetch || !window.DOMParser) {
    return;
  }
  var waiting = null; // a new list held while the person is busy
  var timer = null;

  function key(tr) {
    return tr.getAttribute("data-analysis") || tr.getAttribute("data-group");
  }
  function busy() {
    var a = document.activeElement;
    return region.querySelector("input.pick:checked") !== null || (a !== null && a !== document.body && region.contains(a));
  }
  function say(text, offer) {
    notice.replaceChildren(document.createTextNode(text));
    if (offer) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = "Show them";
      b.addEventListener("click", function () {
        if (waiting) {
          put(waiting.doc, waiting.version);
        }
      });
      notice.append(" ", b);
    }
    notice.hidden = false;
  }
  function put(doc, version) {
    var before = {};
    region.querySelectorAll("tr.item").forEach(function (tr) {
      before[key(tr)] = true;
    });
    region.replaceChildren.apply(region, Array.prototype.slice.call(doc.body.childNodes));
    region.setAttribute("data-version", version);
    waiting = null;
    var fresh = 0;
    region.querySelectorAll("tr.item").forEach(function (tr) {
      if (!before[key(tr)]) {
        tr.classList.add("new");
        fresh++;
      }
    });
    say(fresh === 1 ? "1 new" : fresh > 1 ? fresh + " new" : "The queue changed.", false);
    bindSelectAll();
  }
  function newCount(doc) {
    var n = 0;
    doc.querySelectorAll("tr.item").forEach(function (tr) {
      if (!region.querySelector('tr.item[data-analysis="' + key(tr) + '"], tr.item[data-group="' + key(tr) + '"]')) {
        n++;
      }
    });
    return n;
  }
  function stop(text) {
    clearInterval(timer);
    say(text, false);
  }
  function poll() {
    if (document.hidden) {
      return;
    }
    var q = region.getAttribute("data-query") || "";
    var url = "/ui/queue/live?" + (q ? q + "&" : "") + "v=" + encodeURIComponent(region.getAttribute("data-version") || "");
    fetch(url, { credentials: "same-origin", redirect: "manual" }).then(function (r) {
      if (r.status === 204) {
        return;
      }
      if (!r.ok || r.type === "opaqueredirect") {
        stop("Live updates stopped: reload the page (your session may have ended).");
        return;
      }
      var version = r.headers.get("X-Queue-Version") || "";
      return r.text().then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        if (busy()) {
          waiting = { doc: doc, version: version };
          var n = newCount(doc);
          say(n > 0 ? n + " new" : "The queue changed.", true);
          return;
        }
        put(doc, version);
      });
    }).catch(function () {
      say("Live updates paused: the server did not answer.", false);
    });
  }
  timer = setInterval(poll, 5000);
}
