// slopd's console: the only script, for the browser's passkey calls (WebAuthn). Every page reads
// without it. Forms marked data-webauthn="signin|enroll|approve" ask the server for options,
// call navigator.credentials, and post the browser's answer back, byte for byte (toJSON()).
"use strict";

function csrf() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
  if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
  return answer;
}

async function ceremony(form, status) {
  const kind = form.dataset.webauthn;
  const fields = Object.fromEntries(new FormData(form).entries());
  status.textContent = "Asking your passkey…";
  const begun = await post(form.dataset.options, fields);
  if (begun.pin) form.querySelector('input[name="pin"]').value = begun.pin;
  let credential;
  if (kind === "enroll") {
    const options = PublicKeyCredential.parseCreationOptionsFromJSON(begun.options.publicKey);
    credential = await navigator.credentials.create({ publicKey: options });
  } else {
    const options = PublicKeyCredential.parseRequestOptionsFromJSON(begun.options.publicKey);
    credential = await navigator.credentials.get({ publicKey: options });
  }
  const done = await post(form.action, { ceremony: begun.ceremony, credential: credential.toJSON(), next: fields.next });
  if (done.line) {
    const section = document.querySelector("section.line");
    section.querySelector(".allowed-line").textContent = done.line;
    section.hidden = false;
    status.textContent = `Passkey created for ${begun.principal}.`;
  } else if (done.redirect) {
    status.textContent = "Done.";
    window.location.assign(done.redirect);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const form of document.querySelectorAll("form[data-webauthn]")) {
    const status = form.parentElement.querySelector(".status") || form.querySelector(".status");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const button = form.querySelector("button");
      button.disabled = true;
      ceremony(form, status)
        .catch((error) => { status.textContent = `Not done: ${error.message}`; })
        .finally(() => { button.disabled = false; });
    });
  }
});
