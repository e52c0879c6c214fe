// Emitter is the small event registry Bridge and Host extend: their on and
// off. Unlike Node's EventEmitter it never throws for an "error" nobody
// listens to: with no listener an event is discarded, since a diagnostic
// must never crash the session that carries it. Each subclass emits in its
// own way (Bridge on a later tick, Host at once) from listenersOf.
export class Emitter {
  /** @type {Map<string, Set<Function>>} */
  #sets = new Map();

  /**
   * @param {string} event
   * @param {Function} fn
   */
  on(event, fn) {
    if (!this.#sets.has(event)) this.#sets.set(event, new Set());
    this.#sets.get(event)?.add(fn);
    return this;
  }

  /**
   * @param {string} event
   * @param {Function} fn
   */
  off(event, fn) {
    this.#sets.get(event)?.delete(fn);
    return this;
  }

  /**
   * The listeners of event now, as an array (empty if none).
   * @protected
   * @param {string} event
   */
  listenersOf(event) {
    return [...(this.#sets.get(event) ?? [])];
  }
}
