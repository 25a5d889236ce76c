// "Nova venda": show only the sections the choices need (pickup / shipping, paid offline / Pix com vencimento),
// search the product by name or SKU (datalist), show each line's price and the items' total before submitting,
// and reveal more lines on demand. Without this script every field is shown and the server checks everything.
(function () {
  "use strict";
  // As kernel.money.format_brl writes reais in the page's language: "R$ 1.234,56", in English "R$1,234.56".
  var english = /^en\b/i.test(document.documentElement.lang || "");
  function money(cents) {
    var reais = Math.floor(cents / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, english ? "," : ".");
    var centavos = String(cents % 100).padStart(2, "0");
    return english ? "R$" + reais + "." + centavos : "R$ " + reais + "," + centavos;
  }
  function init() {
    var form = document.querySelector("[data-testid=manual-order-form]");
    if (!form) return;
    var data = JSON.parse(document.getElementById("manual-order-variant-data").textContent);
    var bySku = {};
    data.forEach(function (v) { bySku[v.sku.toUpperCase()] = v; });

    function current(name) {
      var field = form.elements[name];
      if (!field) return "";
      if (field instanceof RadioNodeList) return field.value;
      return field.value;
    }
    function toggle() {
      form.querySelectorAll("[data-when]").forEach(function (group) {
        var rule = group.getAttribute("data-when").split("=");
        group.hidden = current(rule[0]) !== rule[1];
      });
    }
    var lines = Array.prototype.slice.call(form.querySelectorAll(".manual-line"));
    var addButton = document.getElementById("manual-add-line");
    function recount() {
      var total = 0;
      lines.forEach(function (line) {
        var sku = line.querySelector(".manual-line-sku").value.trim().toUpperCase();
        var qtyField = line.querySelector(".manual-line-qty");
        var qty = parseInt(qtyField.value || "1", 10);
        var out = line.querySelector(".manual-line-total");
        var variant = bySku[sku];
        if (variant && qty > 0) {
          out.textContent = money(variant.price) + " × " + qty + " = " + money(variant.price * qty);
          total += variant.price * qty;
        } else {
          out.textContent = "";
        }
      });
      document.getElementById("manual-items-total").textContent = money(total);
    }
    function filled(line) {
      return line.querySelector(".manual-line-sku").value.trim() !== "" ||
        line.querySelector(".manual-line-qty").value.trim() !== "" ||
        line.querySelector(".errorlist") !== null;
    }
    lines.forEach(function (line, index) { line.hidden = index > 0 && !filled(line); });
    function updateAdd() { addButton.hidden = !lines.some(function (line) { return line.hidden; }); }
    addButton.addEventListener("click", function () {
      var next = lines.find(function (line) { return line.hidden; });
      if (next) { next.hidden = false; next.querySelector(".manual-line-sku").focus(); }
      updateAdd();
    });
    form.addEventListener("input", recount);
    form.addEventListener("change", function () { toggle(); recount(); });
    toggle();
    recount();
    updateAdd();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
