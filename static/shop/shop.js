/* Storefront enhancements. Everything works without JavaScript; this only makes variant choice instant. */
(function () {
  "use strict";
  // Filters start folded on phones (results first), unless the page reports a bad parameter.
  var filters = document.querySelector("[data-role=filters]");
  if (filters && window.matchMedia("(max-width: 899px)").matches && !document.querySelector("[data-testid=query-errors]")) {
    filters.open = false;
  }
})();

(function () {
  "use strict";
  var picker = document.querySelector("[data-role=variant-picker]");
  var dataEl = document.getElementById("variant-data");
  if (!picker || !dataEl) return;
  var variants = JSON.parse(dataEl.textContent);
  var q = function (role) { return document.querySelector("[data-role=" + role + "]"); };

  function chosenOptions() {
    var chosen = {};
    picker.querySelectorAll("input[type=radio]:checked").forEach(function (input) {
      chosen[input.name] = input.value;
    });
    return chosen;
  }

  function findVariant(chosen) {
    return variants.find(function (v) {
      return Object.keys(chosen).every(function (name) { return v.options[name] === chosen[name]; });
    });
  }

  function render(variant) {
    var availability = q("availability");
    var button = q("add-button");
    if (!variant) {
      availability.textContent = picker.dataset.unavailable;
      availability.className = "availability availability-outofstock";
      button.disabled = true;
      return;
    }
    q("price").textContent = variant.price;
    var pix = q("pix-price");  // "R$ 94,90 no Pix": only when the shop gives a Pix discount
    if (pix) pix.textContent = variant.pix_price;
    var compare = q("compare-at");
    compare.textContent = variant.compare_at;
    compare.hidden = !variant.compare_at;
    var installments = q("installments");  // card parcelamento line (templates/shop/partials/card_installments_line.html)
    if (installments) {
      installments.textContent = variant.installments || "";
      installments.hidden = !variant.installments;
    }
    var subscriptions = q("subscriptions");  // "Assinar por R$ 89,90 por mês" lines (issue 38)
    if (subscriptions) {
      subscriptions.replaceChildren();
      (variant.subscriptions || []).forEach(function (text) {
        var line = document.createElement("p");
        line.className = "subscription-offer";
        var strong = document.createElement("strong");
        strong.textContent = text;
        line.appendChild(strong);
        subscriptions.appendChild(line);
      });
      subscriptions.hidden = !(variant.subscriptions || []).length;
    }
    availability.textContent = variant.availability_label;
    availability.className = "availability availability-" + variant.availability.toLowerCase();
    q("low-stock").hidden = !variant.low_stock;
    q("sku").value = variant.sku;
    var freightSku = document.querySelector("[data-role=freight-variante]");
    if (freightSku) freightSku.value = variant.sku;  // "Calcular frete" quotes the variant on screen
    q("sku-text").textContent = variant.sku;
    button.disabled = variant.availability === "OutOfStock";
    var url = new URL(window.location.href);
    url.search = "?sku=" + encodeURIComponent(variant.sku);
    window.history.replaceState(null, "", url);
  }

  // A choice with no variant beside the others (Rosa exists only in M, and P was chosen): the other options follow
  // the clicked one to a variant that has it, in stock first, instead of "Combinação indisponível" under the old
  // SKU and price (QA walk, a clothes shop with sizes and colours).
  function followClicked(clicked) {
    var having = variants.filter(function (v) { return v.options[clicked.name] === clicked.value; });
    var best = having.find(function (v) { return v.availability !== "OutOfStock"; }) || having[0];
    if (!best) return undefined;
    Object.keys(best.options).forEach(function (name) {
      picker.querySelectorAll("input[type=radio]").forEach(function (input) {
        if (input.name === name && input.value === best.options[name]) input.checked = true;
      });
    });
    return best;
  }

  // Values with no variant beside the other options chosen now look unavailable (greyed, aria-disabled) but stay
  // clickable: a click moves the other options to a variant that has the value (followClicked).
  function markMissing() {
    var chosen = chosenOptions();
    picker.querySelectorAll("input[type=radio]").forEach(function (input) {
      var wanted = Object.assign({}, chosen);
      wanted[input.name] = input.value;
      var missing = !findVariant(wanted);
      if (missing) input.setAttribute("aria-disabled", "true"); else input.removeAttribute("aria-disabled");
      var chip = input.closest(".option-chip");
      if (chip) chip.classList.toggle("option-missing", missing);
    });
  }

  picker.addEventListener("change", function (event) {
    var variant = findVariant(chosenOptions());
    if (!variant && event.target && event.target.type === "radio") variant = followClicked(event.target);
    render(variant);
    markMissing();
  });
})();
