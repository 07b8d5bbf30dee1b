// The cockpit works without this script; it adds a checkbox that selects
// every row of the queue's page for a bulk approval, keeps the queue live
// (every few seconds it asks whether the queue changed and, when it did,
// puts the new list in place and says how many items are new), and binds
// keyboard shortcuts (press ? for the list).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  bindSelectAll();
  liveQueue();
  shortcuts();
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

// shortcuts binds the keyboard shortcuts (press ? for the list); none
// acts while a person types in a field.
function shortcuts() {
  var keys = [
    ["j", "next row of the queue"],
    ["k", "previous row"],
    ["o", "open the row (Enter too)"],
    ["a", "approve the proposal (review page)"],
    ["d", "decide otherwise (review page)"],
    ["/", "search"],
    ["?", "this list (Escape closes it)"]
  ];
  var help = null;
  function toggleHelp() {
    if (!help) {
      help = document.createElement("dialog");
      help.id = "keys";
      help.setAttribute("aria-label", "Keyboard shortcuts");
      var h = help.appendChild(document.createElement("h2"));
      h.textContent = "Keyboard shortcuts";
      var dl = help.appendChild(document.createElement("dl"));
      keys.forEach(function (k) {
        dl.appendChild(document.createElement("dt")).appendChild(document.createElement("kbd")).textContent = k[0];
        dl.appendChild(document.createElement("dd")).textContent = k[1];
      });
      var close = help.appendChild(document.createElement("button"));
      close.type = "button";
      close.textContent = "Close";
      close.addEventListener("click", function () { help.close(); });
      document.body.appendChild(help);
    }
    if (help.open) {
      help.close();
    } else {
      help.showModal();
    }
  }

  var current = -1;
  function rows() {
    return document.querySelectorAll("tr.item");
  }
  function move(by) {
    var rs = rows();
    if (!rs.length) {
      return;
    }
    if (rs[current]) {
      rs[current].classList.remove("current");
    }
    current = Math.max(0, Math.min(rs.length - 1, current + by));
    var row = rs[current];
    row.classList.add("current");
    var link = row.querySelector("a[href]");
    if (link) {
      link.focus({ preventScroll: true });
    }
    row.scrollIntoView({ block: "nearest" });
  }
  function open() {
    var row = rows()[current];
    var link = row && row.querySelector("a[href]");
    if (link) {
      window.location.href = link.href;
    }
  }

  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing ||
        (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)))) {
      return;
    }
    if (help && help.open && ev.key !== "?") {
      return; // the dialog handles Escape itself
    }
    var el;
    switch (ev.key) {
    case "j": move(1); break;
    case "k": move(-1); break;
    case "o": open(); break;
    case "Enter":
      if (current < 0 || t.tagName === "A" || t.tagName === "BUTTON") {
        return;
      }
      open();
      break;
    case "a":
      el = document.getElementById("approve");
      if (!el || !window.confirm(el.textContent + "?")) {
        return;
      }
      el.form.requestSubmit(el);
      break;
    case "d":
      el = document.getElementById("decision");
      if (!el) {
        return;
      }
      el.focus();
      el.scrollIntoView({ block: "center" });
      break;
    case "/":
      el = document.getElementById("q");
      if (!el) {
        return;
      }
      el.focus();
      el.select();
      break;
    case "?": toggleHelp(); break;
    default: return;
    }
    ev.preventDefault();
  });
}
