// How the page shows what came of a request to its server: the button busy meanwhile, then the
// outcome in a line under it, in the words the server sent.

/** homebridge.request rejects with the server's { message }; anything else is shown as it is. */
export function messageOf(error) {
  return typeof error?.message === 'string' ? error.message : String(error);
}

/** Disables the button and says what is going on until `run` is done; the last outcome goes meanwhile. */
export async function busy(button, outcome, text, run) {
  const idle = button.textContent;
  outcome.hidden = true;
  button.disabled = true;
  button.textContent = text;
  try {
    await run();
  } finally {
    button.disabled = false;
    button.textContent = idle;
  }
}

/** `tone`: success, warning or danger. */
export function showOutcome(target, text, tone) {
  target.textContent = text;
  target.classList.remove('text-success', 'text-danger', 'text-warning');
  target.classList.add(`text-${tone}`);
  target.hidden = false;
}
