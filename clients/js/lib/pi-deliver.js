// Giving mailbox messages to a pi agent, and where they stand in the model
// request. Internal to the package; docs/pi.md ("Delivery to the agent").

/** The customType of the messages the extensions give the agent. */
export const MESSAGE_TYPE = "diagrelay";

/**
 * deliver gives each unacknowledged mailbox message of recipient to the
 * agent as a non-waking message (deliverAs "nextTurn"), then acknowledges
 * the ones pi accepted. What was given is remembered in state, which
 * belongs to one mailbox (registry boxFor), so a message is never given
 * twice to one process by the same mailbox, and a new mailbox (after
 * /reload, /new, a new serve) is never mistaken for an old one. Drains of
 * one mailbox run one at a time; a drain asked for meanwhile runs after.
 * It never rejects: a failed read or ack leaves the messages for the next
 * drain (or the next process of the session).
 * @param {{read: (r: string) => Promise<Array<{id: number, text: string}>>, ack: (r: string, ids: number[]) => Promise<number>}} box
 * @param {import("./pi-registry.js").BoxState} state
 * @param {string} recipient
 * @param {() => any} currentPi the pi to give messages to now (a /reload replaces it)
 * @returns {Promise<void>}
 */
export function deliver(box, state, recipient, currentPi) {
  if (state.draining) {
    state.again = true;
    return state.draining;
  }
  state.draining = (async () => {
    do {
      state.again = false;
      const messages = await box.read(recipient);
      /** @type {number[]} */
      const accepted = [];
      for (const m of messages) {
        if (!state.delivered.has(m.id)) {
          try {
            currentPi().sendMessage({ customType: MESSAGE_TYPE, content: m.text, display: true }, { deliverAs: "nextTurn" });
          } catch {
            break; // pi is gone or not ready: the message stays unacknowledged for the next drain or run
          }
          state.delivered.add(m.id);
        }
        accepted.push(m.id);
      }
      if (accepted.length > 0) {
        await box.ack(recipient, accepted);
        // Acknowledged: the mailbox never returns them again.
        for (const id of accepted) state.delivered.delete(id);
      }
    } while (state.again);
  })()
    .catch(() => {})
    .finally(() => {
      state.draining = null;
    });
  return state.draining;
}

/**
 * beforePrompt is a handler of pi's `context` event (run before each model
 * request, on a copy of the messages): it moves the diagrelay messages that
 * pi placed right after a user's prompt (pi puts a run's "nextTurn"
 * messages after its prompt, 0.73 and 1.6 alike) to just before it, so the
 * last user-role content the model reads is the user's own. Other messages
 * keep their places. It returns undefined (no change) when nothing moves,
 * which keeps pi's request as it is.
 * @param {{messages?: unknown}} event
 * @returns {{messages: any[]} | undefined}
 */
export function beforePrompt(event) {
  const messages = event?.messages;
  if (!Array.isArray(messages)) return undefined;
  const ours = (/** @type {any} */ m) => m?.role === "custom" && m.customType === MESSAGE_TYPE;
  let moved = false;
  /** @type {any[]} */
  const out = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role !== "user") {
      out.push(m);
      continue;
    }
    // The custom messages that came with this prompt: ours go first.
    let j = i + 1;
    while (j < messages.length && messages[j]?.role === "custom") j++;
    const mine = messages.slice(i + 1, j).filter(ours);
    if (mine.length > 0) {
      moved = true;
      out.push(...mine, m, ...messages.slice(i + 1, j).filter((x) => !ours(x)));
      i = j - 1;
    } else {
      out.push(m);
    }
  }
  return moved ? { messages: out } : undefined;
}
