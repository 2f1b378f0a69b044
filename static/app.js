// Reach front-end glue: no framework, progressive enhancement only.
(function () {
  "use strict";

  function onReady(fn) {
    if (document.readyState !== "loading") fn();
    else document.addEventListener("DOMContentLoaded", fn);
  }

  // Math: KaTeX renders $...$ and \(...\) inside text nodes only, so model
  // text (already HTML-escaped by the server) is never parsed as HTML.
  var katexOptions = { throwOnError: false, trust: false, maxSize: 50, maxExpand: 500 };

  function renderMath(root) {
    if (typeof renderMathInElement !== "function") return;
    root.querySelectorAll(".math-text").forEach(function (el) {
      renderMathInElement(el, Object.assign({
        delimiters: [
          { left: "$$", right: "$$", display: true },
          { left: "\\[", right: "\\]", display: true },
          { left: "\\(", right: "\\)", display: false }
        ]
      }, katexOptions));
      renderDollarMath(el);
    });
  }

  // Inline $...$ with pandoc's rule, so prices in word problems ("costs $5,
  // then $7") stay text: the opening $ is followed by a non-space, the
  // closing $ follows a non-space and is not followed by a digit.
  var dollarMath = /\$(?=[^\s$])([^$\n]*?[^\s$\\])\$(?!\d)/g;

  function renderDollarMath(el) {
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, {
      acceptNode: function (n) {
        return n.parentNode.closest(".katex, code") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      }
    });
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    nodes.forEach(function (node) {
      var text = node.nodeValue, last = 0, m, frag = null;
      dollarMath.lastIndex = 0;
      while ((m = dollarMath.exec(text)) !== null) {
        frag = frag || document.createDocumentFragment();
        frag.appendChild(document.createTextNode(text.slice(last, m.index)));
        var span = document.createElement("span");
        try {
          katex.render(m[1], span, katexOptions);
        } catch (e) {
          span.textContent = m[0];
        }
        frag.appendChild(span);
        last = m.index + m[0].length;
      }
      if (frag) {
        frag.appendChild(document.createTextNode(text.slice(last)));
        node.parentNode.replaceChild(frag, node);
      }
    });
  }

  // Code: highlight.js works on textContent, so it cannot run model code.
  function highlightCode(root) {
    if (typeof hljs === "undefined") return;
    root.querySelectorAll("pre code").forEach(function (el) { hljs.highlightElement(el); });
  }

  // New comparison: add model rows; upload with a progress bar.
  function setupForm() {
    var form = document.getElementById("new-comparison") || document.getElementById("new-sampling");
    if (!form) return;
    var add = document.getElementById("add-model");
    add.addEventListener("click", function () {
      var rows = form.querySelectorAll(".model-row");
      var last = rows[rows.length - 1];
      var copy = last.cloneNode(true);
      copy.querySelectorAll("input").forEach(function (i) {
        if (i.type !== "hidden" && i.name !== "model_concurrency") i.value = "";
      });
      // The new row takes the last row's role (an RL model unless the
      // researcher is adding checkpoints), never a checkpoint by itself.
      var sel = copy.querySelector("select[name=model_role]");
      var was = last.querySelector("select[name=model_role]");
      if (sel) sel.value = was ? was.value : "rl";
      last.parentNode.appendChild(copy);
    });
    form.addEventListener("submit", function (ev) {
      if (!window.XMLHttpRequest || !window.FormData) return;
      ev.preventDefault();
      var status = document.getElementById("upload-status") || document.createElement("span");
      var btn = form.querySelector("button[type=submit]");
      btn.disabled = true;
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.upload.onprogress = function (e) {
        if (e.lengthComputable) status.textContent = "Uploading… " + Math.round(100 * e.loaded / e.total) + "%";
      };
      xhr.onload = function () {
        if (xhr.status >= 200 && xhr.status < 400 && xhr.responseURL && xhr.responseURL.indexOf("/comparisons/new") < 0) {
          window.location = xhr.responseURL;
        } else {
          document.open(); document.write(xhr.responseText); document.close();
        }
      };
      xhr.onerror = function () { btn.disabled = false; status.textContent = "Upload failed: the server could not be reached."; };
      xhr.send(new FormData(form));
    });
  }

  // Problem page keys: j / k the next / previous problem of the list (the
  // problem table's view it was opened from, else its solved set), J / K
  // the next / previous unreviewed one, 1-5 the verdict buttons, ? the list
  // of keys (Esc hides it).
  function setupKeys() {
    var help = document.getElementById("shortcuts");
    var toggle = function (show) { if (help) help.hidden = show === undefined ? !help.hidden : !show; };
    var btn = document.getElementById("shortcuts-button");
    if (btn) btn.addEventListener("click", function () { toggle(); });
    var links = { j: "next-problem", k: "prev-problem", J: "next-unreviewed", K: "prev-unreviewed" };
    document.addEventListener("keydown", function (e) {
      if (e.target && /INPUT|TEXTAREA|SELECT/.test(e.target.tagName)) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      if (e.key === "?") { toggle(); e.preventDefault(); return; }
      if (e.key === "Escape") { toggle(false); return; }
      if (/^[1-9]$/.test(e.key)) {
        var v = document.querySelector('#review-form button[data-shortcut="' + e.key + '"]');
        if (v) { v.click(); }
        return;
      }
      var a = links[e.key] && document.getElementById(links[e.key]);
      if (a) window.location = a.href;
    });
  }

  // "Copy" buttons: data-copy names the element whose text to copy (a
  // share link, an embed snippet, a new API token).
  function setupCopy() {
    document.addEventListener("click", function (e) {
      var btn = e.target.closest && e.target.closest("[data-copy]");
      if (!btn) return;
      var src = document.querySelector(btn.getAttribute("data-copy"));
      if (!src) return;
      var text = src.textContent;
      var done = function () { btn.textContent = "Copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { selectText(src); });
      } else {
        selectText(src);
      }
    });
  }

  function selectText(el) {
    var r = document.createRange();
    r.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(r);
  }

  // Chart images: PNG from the chart as drawn, SVG by drawing its option
  // again with ECharts' SVG renderer (server-side mode, no DOM), whatever
  // renderer the page uses. window.reachChartImage(div, "svg" | "png")
  // returns the SVG text or the PNG data URL.
  function chartImage(div, type) {
    var inst = echarts.getInstanceByDom(div);
    if (!inst) return "";
    if (type === "png") return inst.getDataURL({ type: "png", pixelRatio: 2, backgroundColor: "#ffffff" });
    var ssr = echarts.init(null, null, { renderer: "svg", ssr: true, width: div.clientWidth || 800, height: div.clientHeight || 400 });
    var opt = inst.getOption();
    opt.animation = false;
    ssr.setOption(opt);
    var svg = ssr.renderToSVGString();
    ssr.dispose();
    return svg;
  }
  window.reachChartImage = chartImage;

  function download(name, href) {
    var a = document.createElement("a");
    a.href = href;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  function setupChartDownloads() {
    if (typeof echarts === "undefined") return;
    document.querySelectorAll("[_echarts_instance_]").forEach(function (div) {
      if (div.nextElementSibling && div.nextElementSibling.classList.contains("chart-images")) return;
      var bar = document.createElement("p");
      bar.className = "chart-images small";
      bar.appendChild(document.createTextNode("Image: "));
      ["png", "svg"].forEach(function (type, i) {
        if (i) bar.appendChild(document.createTextNode(" · "));
        var b = document.createElement("button");
        b.type = "button";
        b.className = "link chart-" + type;
        b.textContent = type.toUpperCase();
        b.addEventListener("click", function () {
          var data = chartImage(div, type);
          if (type === "svg") {
            var url = URL.createObjectURL(new Blob([data], { type: "image/svg+xml" }));
            download((div.id || "chart") + ".svg", url);
            setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
          } else {
            download((div.id || "chart") + ".png", data);
          }
        });
        bar.appendChild(b);
      });
      div.insertAdjacentElement("afterend", bar);
    });
  }

  // Completions: rendered markdown or the raw text, one button for the
  // page, the choice remembered in this browser. Each completion is in the
  // page both ways (data-view); only one shows.
  var viewKey = "reach.completionView";
  var rawView = false;

  // showView shows the chosen view of the completions under root.
  function showView(root) {
    root.querySelectorAll("[data-view]").forEach(function (el) {
      el.hidden = (el.getAttribute("data-view") === "raw") !== rawView;
    });
  }

  function setupCompletionView() {
    var btn = document.getElementById("completion-view");
    if (!btn) return;
    try { rawView = localStorage.getItem(viewKey) === "raw"; } catch (e) { /* storage off: rendered */ }
    function apply() {
      document.querySelectorAll(".models").forEach(showView);
      btn.setAttribute("aria-pressed", rawView ? "true" : "false");
      btn.textContent = rawView ? "Show rendered markdown" : "Show raw text";
    }
    apply();
    btn.addEventListener("click", function () {
      rawView = !rawView;
      try { localStorage.setItem(viewKey, rawView ? "raw" : "rendered"); } catch (e) { /* not remembered */ }
      apply();
    });
  }

  // Problem page of more than two models: a closed model's samples load
  // when its section is opened (data-samples: the fragment, rendered and
  // escaped by the server as the page is); its link opens the page with
  // them instead when script is off. A link to a sample or model of a
  // closed section (#sample-run-index, #run-id) opens it.
  function loadModel(d, then) {
    var state = d.getAttribute("data-loaded");
    if (state === "yes") { if (then) then(); return; }
    if (state === "loading") return;
    d.setAttribute("data-loaded", "loading");
    var body = d.querySelector(".model-body");
    fetch(d.getAttribute("data-samples"), { credentials: "same-origin" }).then(function (resp) {
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      return resp.text();
    }).then(function (html) {
      body.innerHTML = html;
      d.setAttribute("data-loaded", "yes");
      showView(body);
      renderMath(body);
      highlightCode(body);
      if (then) then();
    }).catch(function (e) {
      d.removeAttribute("data-loaded");
      var p = body.querySelector(".model-error") || body.appendChild(document.createElement("p"));
      p.className = "model-error error small";
      p.textContent = "The samples could not be loaded (" + e.message + "): the link above opens them.";
    });
  }

  function setupClosedModels() {
    var closed = document.querySelectorAll("details.model-closed[data-samples]");
    if (!closed.length) return;
    closed.forEach(function (d) {
      d.addEventListener("toggle", function () { if (d.open) loadModel(d); });
    });
    var m = /^#(?:sample-(\d+)-\d+|run-(\d+))$/.exec(location.hash);
    if (!m || document.querySelector(location.hash)) return;
    var d = document.getElementById("run-" + (m[1] || m[2]));
    if (!d || !d.matches("details.model-closed")) return;
    d.open = true;
    loadModel(d, function () {
      var target = document.querySelector(location.hash);
      if (target) target.scrollIntoView();
    });
  }

  onReady(function () {
    setupCompletionView();
    setupClosedModels();
    renderMath(document);
    highlightCode(document);
    setupForm();
    setupKeys();
    setupCopy();
    setupChartDownloads();
  });
})();
