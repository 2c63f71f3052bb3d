// Acknowledgements and retries (docs/reliability.md): the messages of a call sent to a peer known to acknowledge
// are sent again until acknowledged, after 500 ms and then doubling up to 4 s between tries, for at most 20 s.
// A nested machine of CallMachine: it decides what is due; it never sends.

export const RETRY = Object.freeze({ firstMillis: 500, maxIntervalMillis: 4000, boundMillis: 20000 });

/** What a retried message waits for besides its acknowledgement. */
export const Lifetime = Object.freeze({
  /** The call message: stops when its call leaves calling. */
  whileCalling: 'whileCalling',
  /** The accept: stops when its call ends. */
  whileInCall: 'whileInCall',
  /** Cancel, reject, hangup, the busy reply and the caller's notice: go on after the call ended locally. */
  untilAcknowledged: 'untilAcknowledged',
});

export class Delivery {
  /** @type {Map<string, {peer: number, messageId: number, callId: string, body: string, lifetime: string, firstAt: number, nextAt: number, interval: number}>} */
  #pending = new Map();

  /** Keeps `body` (already sent once) for retries. */
  track({ peer, messageId, callId, body, lifetime }, now) {
    this.#pending.set(`${peer}|${messageId}`, {
      peer, messageId, callId, body, lifetime, firstAt: now, nextAt: now + RETRY.firstMillis, interval: RETRY.firstMillis,
    });
  }

  /** The peer acknowledged `messageId`; whether it was waiting. */
  acknowledged(peer, messageId) {
    return this.#pending.delete(`${peer}|${messageId}`);
  }

  /** The call left calling (connecting, or ended). */
  leftCalling(callId) {
    this.#drop((entry) => entry.callId === callId && entry.lifetime === Lifetime.whileCalling);
  }

  /** The call ended on this side. */
  ended(callId) {
    this.#drop((entry) => entry.callId === callId && entry.lifetime !== Lifetime.untilAcknowledged);
  }

  /** The messages to send again at `now` (their bodies, unchanged); forgets those past the bound. */
  due(now) {
    const resend = [];
    for (const [key, entry] of this.#pending) {
      if (now - entry.firstAt >= RETRY.boundMillis) {
        this.#pending.delete(key);
      } else if (now >= entry.nextAt) {
        entry.interval = Math.min(entry.interval * 2, RETRY.maxIntervalMillis);
        entry.nextAt = Math.min(now + entry.interval, entry.firstAt + RETRY.boundMillis);
        resend.push({ peer: entry.peer, body: entry.body, callId: entry.callId });
      }
    }
    return resend;
  }

  /** When something is next due; `null` when nothing waits. */
  nextDeadline() {
    let next = null;
    for (const entry of this.#pending.values()) {
      const at = Math.min(entry.nextAt, entry.firstAt + RETRY.boundMillis);
      if (next === null || at < next) next = at;
    }
    return next;
  }

  get size() {
    return this.#pending.size;
  }

  #drop(predicate) {
    for (const [key, entry] of this.#pending) if (predicate(entry)) this.#pending.delete(key);
  }
}

/** A set that forgets its oldest entries past `limit` (what an endpoint remembers is bounded). */
export class BoundedSet {
  #items = new Set();
  constructor(limit) {
    this.limit = limit;
  }
  has(item) {
    return this.#items.has(item);
  }
  add(item) {
    this.#items.delete(item);
    this.#items.add(item);
    while (this.#items.size > this.limit) this.#items.delete(this.#items.values().next().value);
  }
  get size() {
    return this.#items.size;
  }
}
