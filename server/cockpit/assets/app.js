// The cockpit works without this script; it only adds a checkbox that
// selects every row of the queue for a bulk approval.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
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
});
