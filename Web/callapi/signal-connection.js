// One session on the server's signaling socket (`/v1/signal`, docs/protocol.md): login, requests answered by id,
// relayed messages, presence, pings that also sample the server's clock, and reconnection with backoff.
//
// Events (EventTarget, each a CustomEvent whose `detail` is the frame): `message` (a relayed message), `presence`,
// `presence_changed`, `held_result`, `call_withdrawn`, `token_will_expire` (with a token provider the session is
// renewed by itself: `renewed` or `renewFailed` follows), `place_call`, `status` (detail `{status, reason}`:
// connecting, connected, reconnecting, stopped).

import { ClockOffsetEstimator } from './clock-offset.js';

/** Reconnection: delay = min(max, base · 2ⁿ) · (½ + ½·random), as the Swift client. */
export const RECONNECT = Object.freeze({ baseMillis: 250, maxMillis: 10000 });
export const PING_INTERVAL_MILLIS = 15000;
/** Sends while the socket is down wait (at most this many, this long) and go out after the next welcome. */
export const OUTBOX = Object.freeze({ maxMessages: 100, maxWaitMillis: 15000 });
/** After these the client does not reconnect by itself. */
const FINAL_CODES = new Set(['token_expired', 'logged_out', 'invalid_token', 'missing_token', 'user_mismatch', 'too_many_sessions']);

/** A refusal by the server (an `error` frame, a failed `answer`, or the connection's end). */
export class SignalError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

export class SignalConnection extends EventTarget {
  /**
   * @param {{url: string, token: string | (() => Promise<string>), deviceId?: string,
   *   WebSocket?: typeof WebSocket, now?: () => number, random?: () => number}} options
   *   `url`: the server's base, `ws(s)://host:port` (the path is added).
   */
  constructor({ url, token, deviceId, WebSocket: Socket = globalThis.WebSocket, now = () => Date.now(), random = Math.random }) {
    super();
    this.url = url.replace(/\/+$/, '') + '/v1/signal';
    this.token = token;
    this.deviceId = deviceId;
    this.Socket = Socket;
    this.now = now;
    this.random = random;
    this.clock = new ClockOffsetEstimator();
    this.status = 'idle';
    this.welcome = null;
    this.nextId = 1;
    this.pending = new Map();
    this.outbox = [];
    this.attempt = 0;
    this.socket = null;
    this.timers = new Set();
  }

  /** The server's clock against this one, `{offsetMillis, errorMillis, samples}`, or `null` before a login. */
  get clockOffset() {
    return this.clock.estimate;
  }

  /** This clock read on the server's: `now() + offset`. */
  serverNow() {
    return this.now() + (this.clock.estimate?.offsetMillis ?? 0);
  }

  /** Connects and logs in; resolves with the `welcome`, rejects with the refusal. */
  connect() {
    if (this.status === 'connected') return Promise.resolve(this.welcome);
    return new Promise((resolve, reject) => {
      this.loginWaiter = { resolve, reject };
      this.#open();
    });
  }

  /** Sends `body` to user `to`; resolves with the `answer` frame (`delivered` or `queued`), rejects when it failed. */
  send(to, body, { ttl, push, copy } = {}) {
    return this.request({ type: 'send', to, body, ttl, push, copy }).then((answer) => {
      if (answer.result === 'failed') throw new SignalError(answer.reason ?? 'failed', answer.message ?? 'not delivered');
      return answer;
    });
  }

  /** Sends a frame that takes an `id` and resolves with its reply (rejects with an `error` frame's code). */
  request(frame) {
    return new Promise((resolve, reject) => {
      const entry = { frame, resolve, reject, queuedAt: this.now() };
      if (this.status === 'connected') return this.#write(entry);
      if (this.status === 'stopped') return reject(new SignalError('stopped', 'the connection is closed'));
      if (this.outbox.length >= OUTBOX.maxMessages) return reject(new SignalError('queue_full', 'too many sends wait for the connection'));
      this.outbox.push(entry);
    });
  }

  /** Who is online now, and from then on `presence_changed` events. */
  subscribePresence() {
    return this.request({ type: 'subscribe' });
  }

  /** A page of this user's call history (newest first), as the ledger keeps it. */
  calls({ missed, since, limit, cursor } = {}) {
    return this.request({ type: 'calls', missed, since, limit, cursor });
  }

  /** What this device saw of a call (docs/timeline.md). */
  report(report) {
    return this.request({ type: 'report', ...report });
  }

  /** Logs out and closes; no reconnection. */
  close() {
    if (this.status === 'connected') this.socket.send(JSON.stringify({ type: 'logout' }));
    this.#stop('closed', 'closed by the app');
  }

  #open() {
    this.#setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting');
    let socket;
    try {
      socket = new this.Socket(this.url);
    } catch (error) {
      return this.#dropped(String(error));
    }
    this.socket = socket;
    socket.onopen = async () => {
      try {
        const token = typeof this.token === 'function' ? await this.token() : this.token;
        this.loginSentAt = this.now();
        socket.send(JSON.stringify({ type: 'login', id: 0, token, deviceId: this.deviceId }));
      } catch (error) {
        this.#stop('token', `no token: ${error.message ?? error}`);
      }
    };
    socket.onmessage = (event) => this.#frame(event.data);
    socket.onclose = (event) => {
      if (socket === this.socket) this.#dropped(`closed ${event.code} ${event.reason ?? ''}`.trim());
    };
    socket.onerror = () => {};
  }

  #frame(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    const receivedAt = this.now();
    switch (frame.type) {
      case 'welcome':
        this.clock.add({ sentAt: this.loginSentAt, receivedAt, serverTime: frame.serverTime });
        this.welcome = frame;
        this.attempt = 0;
        this.#setStatus('connected');
        this.loginWaiter?.resolve(frame);
        this.loginWaiter = null;
        this.#schedulePing();
        for (const entry of this.outbox.splice(0)) {
          if (receivedAt - entry.queuedAt > OUTBOX.maxWaitMillis) entry.reject(new SignalError('timeout', 'the connection did not come back in time'));
          else this.#write(entry);
        }
        return;
      case 'pong': {
        const entry = this.pending.get(frame.id);
        if (entry) this.clock.add({ sentAt: entry.sentAt, receivedAt, serverTime: frame.serverTime });
        return this.#settle(frame);
      }
      case 'error':
        if (frame.id === 0 && this.status !== 'connected') {
          this.loginWaiter?.reject(new SignalError(frame.code, frame.message));
          this.loginWaiter = null;
          if (FINAL_CODES.has(frame.code)) return this.#stop(frame.code, frame.message);
          return;
        }
        return this.#settle(frame, new SignalError(frame.code, frame.message));
      case 'closing':
        if (FINAL_CODES.has(frame.reason)) this.#stop(frame.reason, frame.message);
        return;
      case 'message':
        return this.#emit('message', frame);
      case 'token_will_expire':
        this.#renew();
        return this.#emit('token_will_expire', frame);
      default:
        if (frame.id !== undefined && this.pending.has(frame.id)) return this.#settle(frame);
        return this.#emit(frame.type, frame);
    }
  }

  /** With a token provider, a fresh token replaces the expiring one on the open session (`renew`). */
  async #renew() {
    if (typeof this.token !== 'function') return;
    try {
      const token = await this.token();
      const renewed = await this.request({ type: 'renew', token });
      this.#emit('renewed', renewed);
    } catch (error) {
      this.#emit('renewFailed', { code: error.code ?? 'token', message: error.message ?? String(error) });
    }
  }

  #write(entry) {
    const id = this.nextId++;
    entry.sentAt = this.now();
    this.pending.set(id, entry);
    const frame = { ...entry.frame, id };
    for (const key of Object.keys(frame)) if (frame[key] === undefined) delete frame[key];
    this.socket.send(JSON.stringify(frame));
  }

  #settle(frame, error) {
    const entry = this.pending.get(frame.id);
    if (!entry) return;
    this.pending.delete(frame.id);
    if (error) entry.reject(error);
    else entry.resolve(frame);
  }

  #schedulePing() {
    this.#after(PING_INTERVAL_MILLIS, () => {
      if (this.status !== 'connected') return;
      this.request({ type: 'ping' }).catch(() => {});
      this.#schedulePing();
    });
  }

  #dropped(reason) {
    if (this.status === 'stopped') return;
    this.#failPending('connectionLost', `the connection was lost (${reason}); the request may or may not have arrived`);
    const delay = Math.min(RECONNECT.maxMillis, RECONNECT.baseMillis * 2 ** this.attempt) * (0.5 + 0.5 * this.random());
    this.attempt += 1;
    this.#setStatus('reconnecting', reason);
    this.#after(delay, () => this.status === 'reconnecting' && this.#open());
  }

  #stop(code, message) {
    this.#setStatus('stopped', `${code}: ${message}`);
    this.#failPending(code, message);
    for (const entry of this.outbox.splice(0)) entry.reject(new SignalError(code, message));
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const socket = this.socket;
    this.socket = null;
    try {
      socket?.close(1000);
    } catch {}
  }

  #failPending(code, message) {
    for (const entry of this.pending.values()) entry.reject(new SignalError(code, message));
    this.pending.clear();
  }

  #after(millis, action) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, millis);
    this.timers.add(timer);
  }

  #setStatus(status, reason) {
    this.status = status;
    this.#emit('status', { status, reason });
  }

  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}
