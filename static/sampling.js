// Sampling form: the budget hint shows the uniform design's total (n ×
// models × problems) and the budgets adaptive sampling accepts, as the form
// changes. The server checks the same bounds (jobs.SamplingConfig.CheckBudget).
(function () {
  "use strict";
  function grouped(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }
  function setup() {
    var form = document.getElementById("new-sampling");
    var hint = document.getElementById("budget-hint");
    if (!form || !hint) return;
    var plain = hint.textContent.trim();
    function update() {
      var n = parseInt(form.querySelector("input[name=n]").value, 10);
      var models = form.querySelectorAll(".model-row").length;
      var sel = form.querySelector("select[name=dataset_id]");
      var opt = sel && sel.value ? sel.options[sel.selectedIndex] : null;
      var problems = opt ? parseInt(opt.getAttribute("data-problems"), 10) : NaN;
      var limit = parseInt(form.querySelector("input[name=limit]").value, 10);
      if (problems > 0 && limit > 0 && limit < problems) problems = limit;
      if (!(n > 0) || !(problems > 0)) {
        hint.textContent = plain + (opt ? "" : " (An uploaded dataset's problems are counted once it is loaded.)");
        return;
      }
      var cells = models * problems;
      hint.textContent = "The total over all models and problems; n is then the target, which no problem goes past. " +
        "A uniform design draws n × models × problems = " + n + " × " + models + " × " + grouped(problems) + " = " +
        grouped(n * cells) + " samples; the budget must be between " + grouped(2 * cells) + " and " + grouped(n * cells) + ".";
    }
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    var add = document.getElementById("add-model");
    if (add) add.addEventListener("click", function () { setTimeout(update, 0); });
    update();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
