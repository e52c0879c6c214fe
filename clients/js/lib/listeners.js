// Listeners is the small event registry of Bridge and Host. Unlike Node's
// EventEmitter it never throws for an "error" nobody listens to: with no
// listener an event is discarded, since a diagnostic must never crash the
// session that carries it.
export class Listeners {
  /** @type {Map<string, Set<Function>>} */
  #sets = new Map();

  on(event, fn) {
    if (!this.#sets.has(event)) this.#sets.set(event, new Set());
    this.#sets.get(event)?.add(fn);
  }

  off(event, fn) {
    this.#sets.get(event)?.delete(fn);
  }

  /** The listeners of event now, as an array (empty if none). */
  of(event) {
    return [...(this.#sets.get(event) ?? [])];
  }
}
