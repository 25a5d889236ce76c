/* Checkout enhancements; every page works without JavaScript. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // One-page checkout: show only the panel of the chosen delivery method.
  var radios = document.querySelectorAll("[data-role=method]");
  function syncPanels() {
    var chosen = document.querySelector("[data-role=method]:checked");
    document.querySelectorAll(".method-panel").forEach(function (panel) {
      panel.hidden = chosen && panel.dataset.method !== chosen.value;
    });
  }
  radios.forEach(function (r) { r.addEventListener("change", syncPanels); });
  if (radios.length) syncPanels();

  // A "Pagar" bounced by a field opens at that field, focused: on a phone the page reloaded at its top, the
  // error (e.g. "Escolha a forma de entrega.") a screen or more below. An error for the whole checkout is at the
  // top already (role=alert), so the page stays there. The subscribe form (Pix Automático) is bounced the same way.
  var firstInvalid = Array.prototype.find.call(
    document.querySelectorAll("[data-testid=checkout-form] .field-invalid, [data-testid=subscribe-form] .field-invalid"),
    function (box) { return box.offsetParent !== null; });
  if (firstInvalid && !document.querySelector("[data-testid=general-errors]")) {
    firstInvalid.scrollIntoView({ block: "center" });
    var target = firstInvalid.querySelector("input:not([type=hidden]), select, textarea");
    if (target) target.focus({ preventScroll: true });
  }

  // Another shipping option changes the total, the Pix price and the installments: the summary is computed
  // again at once (as "Calcular frete" does without JavaScript), so the buyer pays the total on the screen.
  var recalc = document.querySelector("[data-testid=calc-shipping]");
  document.querySelectorAll("input[name=shipping_option]").forEach(function (option) {
    option.addEventListener("change", function () { if (recalc) recalc.click(); });
  });
  // So does a pickup store (free) instead of the freight, and going back to one already chosen or to a delivery
  // whose CEP is typed: otherwise the summary kept the old freight and "Pagar" bounced with "O total mudou".
  document.querySelectorAll("input[name=pickup_location]").forEach(function (location) {
    location.addEventListener("change", function () { if (recalc) recalc.click(); });
  });
  // Pickup before a store is chosen, on a page priced with a delivery option: the summary carried that freight
  // ("Frete — SEDEX R$ 32,90" under "Retirar na loja", the buyer's walk), so it is computed again without it.
  var renderedMethod = document.querySelector("[data-role=method]:checked");
  var pricedDelivery = !!(renderedMethod && renderedMethod.value === "shipping" &&
    document.querySelector("input[name=shipping_option]:checked"));
  radios.forEach(function (r) {
    r.addEventListener("change", function () {
      var chosen = r.value === "pickup"
        ? document.querySelector("input[name=pickup_location]:checked") || pricedDelivery
        : (document.querySelector("input[name=cep]") || {}).value;
      if (recalc && chosen) recalc.click();
    });
  });

  // CEP → address: street, bairro, city and UF appear once the 8 digits are typed (without JS, "Calcular
  // frete" fills them on the server). What the buyer typed is never overwritten; the UF always follows the CEP.
  var cepForm = document.querySelector("[data-cep-url]");
  var cepInput = cepForm && cepForm.querySelector("input[name=cep]");
  if (cepInput) {
    var filled = {};
    var asked = "";
    var cepStatus = cepForm.querySelector("[data-role=cep-status]");
    // The order's address shown to be corrected (order page): a new CEP replaces what the buyer has not typed
    // over (the old city stayed beside the new CEP's UF).
    cepForm.querySelectorAll("input[data-cep-replaceable]").forEach(function (input) {
      filled[input.name] = input.value;
    });
    var setField = function (name, value) {
      var input = cepForm.querySelector("input[name=" + name + "]");
      if (!input || !value) return;
      if (name === "uf" || input.value.trim() === "" || input.value === filled[name]) {
        input.value = value;
        filled[name] = value;
      }
    };
    var lookup = function () {
      var digits = cepInput.value.replace(/\D/g, "");
      if (digits.length !== 8 || digits === asked) return;
      asked = digits;
      fetch(cepForm.dataset.cepUrl.replace("00000000", digits), { headers: { Accept: "application/json" } })
        .then(function (r) { return r.status === 200 ? r.json() : null; })  // unknown CEP: 200, found false
        .then(function (data) {
          if (!data || cepInput.value.replace(/\D/g, "") !== digits) return;  // the buyer typed on meanwhile
          if (cepStatus) cepStatus.textContent = data.found ? "" : cepForm.dataset.cepNotFound;
          if (!data.found) return;
          setField("street", data.street);
          setField("neighborhood", data.neighborhood);
          setField("city", data.city);
          setField("uf", data.uf);
        })
        .catch(function () { /* offline: the buyer types the address, the server checks it */ });
    };
    cepInput.addEventListener("input", lookup);
    cepInput.addEventListener("change", lookup);
  }

  // The e-mail is saved as soon as the buyer leaves its field, so an abandoned checkout can get its one
  // reminder (without JS, submitting the form saves it). keepalive: the save survives leaving the page.
  var emailForm = document.querySelector("[data-email-url]");
  var emailInput = emailForm && emailForm.querySelector("input[name=email]");
  if (emailInput) {
    var savedEmail = emailInput.value.trim();
    var saveEmail = function () {
      var value = emailInput.value.trim();
      if (value === savedEmail || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) return;
      var previous = savedEmail;
      savedEmail = value;  // "change" and "blur" both fire: one request
      var token = emailForm.querySelector("input[name=csrfmiddlewaretoken]");
      var body = new URLSearchParams({ email: value, csrfmiddlewaretoken: token ? token.value : "" });
      fetch(emailForm.dataset.emailUrl, {
        method: "POST", body: body, keepalive: true, credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRFToken": token ? token.value : "" },
      })
        .then(function (r) { if (!r.ok && savedEmail === value) savedEmail = previous; })
        .catch(function () { if (savedEmail === value) savedEmail = previous; });  // the submit saves it
    };
    emailInput.addEventListener("change", saveEmail);
    emailInput.addEventListener("blur", saveEmail);
  }

  // Pix page: copy button, countdown, status polling.
  document.querySelectorAll("[data-role=copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var target = document.getElementById(button.dataset.target);
      var label = button.textContent;
      var done = function () { button.textContent = button.dataset.done; setTimeout(function () { button.textContent = label; }, 2000); };
      if (navigator.clipboard) { navigator.clipboard.writeText(target.value).then(done); }
      else { target.select(); document.execCommand("copy"); done(); }
    });
  });
  var page = document.querySelector("[data-role=pix-page]");
  if (!page) return;
  var countdown = page.querySelector("[data-role=countdown]");
  var statusLine = page.querySelector("[data-role=pix-status]");
  var expiresAt = new Date(page.dataset.expiresAt).getTime();
  var timer = null;
  var delay = 2000;
  function tick() {
    if (!countdown) return;
    var left = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
    var m = Math.floor(left / 60), s = left % 60;
    countdown.textContent = m + ":" + (s < 10 ? "0" : "") + s;
    if (left === 0 && statusLine && statusLine.dataset.checking) statusLine.textContent = statusLine.dataset.checking;
  }
  tick();
  setInterval(tick, 1000);
  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }
  function poll() {
    fetch(page.dataset.statusUrl, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        if (data.status === "completed" && data.order_url) { window.location.href = data.order_url; return; }
        // Expired (the server notices it when asked), canceled or moved back to the form: the page reloads
        // and the server-side page shows "Este Pix expirou… Gerar novo Pix" or where to go.
        if (data.pix_expired || (data.status && data.status !== "complete_in_progress")) { window.location.reload(); return; }
        delay = Math.min(delay * 1.3, 10000);
        // Right after the expiry the page asks at once instead of waiting for the slow poll.
        var untilExpiry = expiresAt + 1000 - Date.now();
        schedule(untilExpiry > 0 ? Math.min(delay, untilExpiry) : delay);
      })
      .catch(function () { schedule(10000); });
  }
  schedule(delay);
})();
