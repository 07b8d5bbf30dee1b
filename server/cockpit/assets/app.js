// The cockpit works without this script. It adds a checkbox that selects
// every row of the queue for a bulk approval, and keyboard shortcuts
// (press ? for the list); no shortcut acts while a person types in a field.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var all = document.getElementById("select-all");
  if (all) {
    all.hidden = false;
    all.addEventListener("change", function () {
      document.querySelectorAll("input.pick").forEach(function (box) {
        box.checked = all.checked;
      });
    });
  }

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
});
