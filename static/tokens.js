// Token view (issue 26): hovering a token of the shaded completion shows
// both models' log-probabilities of it, Δ, the JS divergence and each
// model's top alternatives, read once from the page's tokens.json. The
// position of a token is its chunk's data-from plus its place in the chunk
// (no attribute per token keeps a 32k-token page small). Model output is
// set as textContent only, never as HTML.
(function () {
  "use strict";
  function fmt(x) {
    return x === null || x === undefined ? "—" : Number(x).toFixed(3);
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function altTable(title, m, i) {
    var t = el("table", undefined, "small");
    var cap = el("caption", title + " (" + m.model + ")");
    t.appendChild(cap);
    var toks = m.top_tokens[i] || [];
    toks.forEach(function (tok, j) {
      var tr = el("tr");
      var td = el("td");
      td.appendChild(el("code", JSON.stringify(tok).slice(1, -1)));
      tr.appendChild(td);
      tr.appendChild(el("td", fmt(m.top_logprobs[i][j])));
      t.appendChild(tr);
    });
    return t;
  }
  function setup() {
    var box = document.getElementById("token-text");
    var tip = document.getElementById("token-tip");
    if (!box || !tip) return;
    var data = null;
    var pending = null;
    function load() {
      if (!pending) {
        pending = fetch(box.getAttribute("data-src"), { credentials: "same-origin" })
          .then(function (r) { return r.json(); })
          .then(function (d) { data = d; return d; });
      }
      return pending;
    }
    function show(span) {
      var chunk = span.parentNode;
      var i = parseInt(chunk.getAttribute("data-from"), 10) + Array.prototype.indexOf.call(chunk.children, span);
      load().then(function (d) {
        if (!d.tokens || i >= d.tokens.length) return;
        tip.textContent = "";
        tip.appendChild(el("p", "#" + i + " " + JSON.stringify(d.tokens[i]), "tip-token"));
        tip.appendChild(el("p", "log p base " + fmt(d.base.logprobs[i]) + " · log p RL " + fmt(d.rl.logprobs[i]) +
          " · Δ " + fmt(d.delta[i]) + " · JS " + fmt(d.js[i]) + " bits", "small"));
        var row = el("div", undefined, "tip-alts");
        row.appendChild(altTable("base", d.base, i));
        row.appendChild(altTable("RL", d.rl, i));
        tip.appendChild(row);
        var r = span.getBoundingClientRect();
        tip.style.left = Math.max(0, r.left + window.scrollX) + "px";
        tip.style.top = (r.bottom + window.scrollY + 4) + "px";
        tip.hidden = false;
        tip.setAttribute("data-index", String(i));
      });
    }
    // Blocks past the first few come as plain text: each becomes shaded
    // spans when it nears the screen (the same shading as the server's
    // views.ShadeClass).
    function shade(d) {
      var a = Math.abs(d), lvl = 0;
      [0.05, 0.25, Math.LN2, 1.5].forEach(function (e) { if (a >= e) lvl++; });
      if (lvl === 0) return "tk";
      return "tk " + (d > 0 ? "p" : "n") + lvl;
    }
    function upgrade(chunk) {
      load().then(function (d) {
        if (!chunk.classList.contains("lazy") || !d.tokens) return;
        var from = parseInt(chunk.getAttribute("data-from"), 10);
        var next = chunk.nextElementSibling;
        var to = next ? parseInt(next.getAttribute("data-from"), 10) : d.tokens.length;
        var frag = document.createDocumentFragment();
        for (var i = from; i < to && i < d.tokens.length; i++) {
          frag.appendChild(el("span", d.tokens[i], shade(d.delta[i])));
        }
        chunk.textContent = "";
        chunk.appendChild(frag);
        chunk.classList.remove("lazy");
      });
    }
    var lazy = box.querySelectorAll(".tok-chunk.lazy");
    if (lazy.length && "IntersectionObserver" in window) {
      var io = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) {
          if (e.isIntersecting) { io.unobserve(e.target); upgrade(e.target); }
        });
      }, { rootMargin: "1500px 0px" });
      lazy.forEach(function (c) { io.observe(c); });
    } else {
      lazy.forEach(upgrade);
    }
    box.addEventListener("mouseover", function (ev) {
      var t = ev.target;
      if (t && t.classList && t.classList.contains("tk")) show(t);
    });
    box.addEventListener("mouseleave", function () { tip.hidden = true; });
    load();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
