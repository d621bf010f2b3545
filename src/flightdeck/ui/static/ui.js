// Live run pages: the server sends a `change` event (server-sent events)
// whenever the journal row of the run or one of its steps changes; the page
// then asks htmx to fetch its body again.
document.addEventListener("DOMContentLoaded", function () {
  var live = document.querySelector("[data-live]");
  if (!live || !window.EventSource) return;
  var source = new EventSource(live.getAttribute("data-live"));
  source.addEventListener("change", function () {
    htmx.trigger(live, "refresh");
  });
  live.addEventListener("htmx:afterSwap", function () {
    var state = live.querySelector("[data-run-status]");
    var status = state && state.getAttribute("data-run-status");
    if (status === "completed" || status === "failed" || status === "interrupted") {
      source.close();
    }
  });
});
