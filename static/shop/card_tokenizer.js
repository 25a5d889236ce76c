/* Card tokenization in the buyer's browser: the card number, expiry and CVV never reach the shop.
 *
 * The inputs have no `name`, so a form submit never carries them. On "Pagar com cartão" this script
 * validates them, asks the tokenizer for a token, writes only the token into `card_token`, empties the
 * inputs and submits. Tokenizers:
 *  - "sandbox" (development and tests): the token is made here, from the test card's outcome and its
 *    last four digits (tok_sbx_<ok|code>_<last4>_<random>); nothing about the card leaves the page.
 *  - "pagarme": Pagar.me's tokens API (POST https://api.pagar.me/core/v5/tokens?appId=<public key>),
 *    called from the browser straight to the gateway (CSP connect-src allows it when configured).
 */
(function () {
  "use strict";
  var box = document.querySelector("[data-role=card-pay]");
  if (!box) return;
  var form = box.closest("form");
  var errorBox = box.querySelector("[data-role=card-error]");
  var tokenInput = box.querySelector("[data-role=card-token]");
  var field = function (name) { return box.querySelector("[data-card=" + name + "]"); };

  function digits(value) { return (value || "").replace(/\D/g, ""); }

  function luhn(number) {
    var sum = 0;
    for (var i = 0; i < number.length; i++) {
      var d = Number(number[number.length - 1 - i]);
      if (i % 2 === 1) { d *= 2; if (d > 9) d -= 9; }
      sum += d;
    }
    return number.length >= 13 && number.length <= 19 && sum % 10 === 0;
  }

  function expiry(value) {
    var m = /^(\d{2})\/?(\d{2})$/.exec((value || "").trim());
    if (!m) return null;
    var month = Number(m[1]), year = 2000 + Number(m[2]);
    var now = new Date();
    if (month < 1 || month > 12) return null;
    if (year < now.getFullYear() || (year === now.getFullYear() && month < now.getMonth() + 1)) return null;
    return { month: month, year: year };
  }

  function fail(message) {
    errorBox.textContent = message;
    errorBox.hidden = false;
  }

  function randomHex(bytes) {
    var values = new Uint8Array(bytes);
    window.crypto.getRandomValues(values);
    return Array.prototype.map.call(values, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  // The sandbox's test cards, by their last four digits (like the gateways' documented test cards).
  var SANDBOX_DECLINES = { "0002": "51", "0069": "54", "0127": "82", "0119": "05" };

  function sandboxToken(card) {
    var last4 = card.number.slice(-4);
    return Promise.resolve("tok_sbx_" + (SANDBOX_DECLINES[last4] || "ok") + "_" + last4 + "_" + randomHex(8));
  }

  function pagarmeToken(card) {
    var url = "https://api.pagar.me/core/v5/tokens?appId=" + encodeURIComponent(box.dataset.publicKey || "");
    var body = {
      type: "card",
      card: { number: card.number, holder_name: card.holder, exp_month: card.month, exp_year: card.year, cvv: card.cvv },
    };
    return fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (response) { if (!response.ok) throw new Error("tokenize"); return response.json(); })
      .then(function (answer) { if (!answer.id) throw new Error("tokenize"); return answer.id; });
  }

  function readCard() {
    var number = digits(field("number").value);
    var holder = (field("holder").value || "").trim();
    var exp = expiry(field("expiry").value);
    var cvv = digits(field("cvv").value);
    if (!luhn(number)) return fail(box.dataset.msgNumber);
    if (!holder) return fail(box.dataset.msgHolder);
    if (!exp) return fail(box.dataset.msgExpiry);
    if (cvv.length < 3 || cvv.length > 4) return fail(box.dataset.msgCvv);
    return { number: number, holder: holder, month: exp.month, year: exp.year, cvv: cvv };
  }

  function clearCard() {
    ["number", "holder", "expiry", "cvv"].forEach(function (name) { field(name).value = ""; });
  }

  // The chosen plan in full under the select, whose closed box cuts the label on a phone.
  var planSelect = box.querySelector("select[name=installments]");
  var planChosen = box.querySelector("[data-role=plan-chosen]");
  if (planSelect && planChosen) {
    planSelect.addEventListener("change", function () {
      planChosen.textContent = planSelect.options[planSelect.selectedIndex].text;
    });
  }

  field("number").addEventListener("input", function (event) {
    var d = digits(event.target.value).slice(0, 19);
    event.target.value = d.replace(/(\d{4})(?=\d)/g, "$1 ");
  });
  field("expiry").addEventListener("input", function (event) {
    var d = digits(event.target.value).slice(0, 4);
    event.target.value = d.length > 2 ? d.slice(0, 2) + "/" + d.slice(2) : d;
  });

  form.addEventListener("submit", function (event) {
    var submitter = event.submitter;
    if (!submitter || submitter.value !== "pay_card") return;
    event.preventDefault();
    errorBox.hidden = true;
    var card = readCard();
    if (!card) return;
    var tokenize = box.dataset.tokenizer === "pagarme" ? pagarmeToken : sandboxToken;
    submitter.disabled = true;
    tokenize(card).then(function (token) {
      tokenInput.value = token;
      clearCard();
      var action = document.createElement("input");
      action.type = "hidden";
      action.name = "action";
      action.value = "pay_card";
      form.appendChild(action);
      form.submit();
    }).catch(function () {
      submitter.disabled = false;
      fail(box.dataset.msgFailed);
    });
  });
})();
