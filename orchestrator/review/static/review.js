// Keyboard shortcuts of the review queue: j/k move, a/r/c decide, / filters. None acts while the person types.
(function () {
  "use strict";
  const cards = Array.from(document.querySelectorAll("[data-card]"));
  let current = -1;

  function select(i, focus) {
    if (!cards.length) return;
    current = Math.max(0, Math.min(cards.length - 1, i));
    cards.forEach(function (c, n) { c.classList.toggle("current", n === current); });
    if (focus) {
      cards[current].focus({ preventScroll: true });
      cards[current].scrollIntoView({ block: "start" });
    }
  }

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function hint(card, text) {
    let p = card.querySelector(".hint");
    if (!p) {
      p = document.createElement("p");
      p.className = "hint";
      p.setAttribute("role", "alert");
      card.querySelector("form").appendChild(p);
    }
    p.textContent = text;
  }

  function decide(verdict) {
    if (current < 0) select(0, true);
    const card = cards[current];
    if (!card) return;
    const note = card.querySelector("[data-note]");
    if (verdict !== "approve" && !note.value.trim()) {
      note.focus();
      if (verdict === "reject") hint(card, "Say why in the note, then press Reject.");
      return;
    }
    card.querySelector('[data-verdict="' + verdict + '"]').click();
  }

  if (location.hash.startsWith("#card-")) {
    const id = decodeURIComponent(location.hash.slice(1));
    const i = cards.findIndex(function (c) { return c.id === id; });
    if (i >= 0) select(i, true);
  }
  cards.forEach(function (c, n) { c.addEventListener("focusin", function () { select(n, false); }); });

  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && typing(e.target)) { e.target.blur(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    const act = {
      j: function () { select(current + 1, true); },
      k: function () { select(current - 1, true); },
      a: function () { decide("approve"); },
      r: function () { decide("reject"); },
      c: function () { decide("comment"); },
      "/": function () { const f = document.querySelector("[data-filter]"); if (f) f.focus(); },
    }[e.key];
    if (act) { e.preventDefault(); act(); }
  });
})();
