// "Registrar devolução": the refund field follows the units marked with what the buyer paid for them (each
// quantity field carries the values of 0, 1, … units, orders.net_value), never more than is still refundable.
// A value the staff typed themselves is left alone.
(function () {
  "use strict";
  var refund = document.querySelector("input[data-suggested-refund]");
  if (!refund) return;
  var quantities = Array.prototype.slice.call(document.querySelectorAll("input[data-net-values]"));
  var refundable = parseInt(refund.getAttribute("data-refundable"), 10) || 0;

  function brl(centavos) {
    var reais = String(Math.floor(centavos / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ".");
    return reais + "," + String(centavos % 100).padStart(2, "0");
  }

  function suggestion() {
    var total = 0;
    quantities.forEach(function (input) {
      var values = input.getAttribute("data-net-values").split(",");
      var units = parseInt(input.value, 10);
      if (units > 0) total += parseInt(values[Math.min(units, values.length - 1)], 10) || 0;
    });
    return Math.min(total, refundable);
  }

  var last = refund.value;
  function update() {
    if (refund.value !== last) return;  // typed by the staff
    var value = suggestion();
    last = value ? brl(value) : "";
    refund.value = last;
    refund.setAttribute("data-suggested-refund", last);
  }
  quantities.forEach(function (input) { input.addEventListener("input", update); });
  if (!refund.value) update();  // units marked before this script ran (a slow page)
})();
