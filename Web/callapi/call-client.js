// The shell around CallMachine: it feeds the machine what happens (local requests, relayed messages, answers to
// sends, the room's media events, time) and performs what the machine decides (send, join, leave, report), in
// order. One per logged-in user on this page.
//
// Events (CustomEvent): `stateChanged` {state, reason, event, info, callId, peer}, `event` {event, reason},
// `error` {code, message}, `localStream` {stream}, `remoteStream` {uid, stream}, `quality` {uid, quality},
// `reported` {callId, error?}, `log` {level, message}.

import { CallMachine } from './call-machine.js';
import { Action, CallEvent, CallState, StateReason, readMessage } from './wire.js';
import { RtcRoom } from './rtc-room.js';

const NAMES = {
  state: Object.fromEntries(Object.entries(CallState).map(([name, value]) => [value, name])),
  reason: Object.fromEntries(Object.entries(StateReason).map(([name, value]) => [value, name])),
  event: Object.fromEntries(Object.entries(CallEvent).map(([name, value]) => [value, name])),
};
/** What a report carries at most (the server refuses more: docs/protocol.md `report`). */
const REPORT_LIMITS = { events: 256, quality: 300, detail: 200 };

export class CallClient extends EventTarget {
  /**
   * @param {{signal: import('./signal-connection.js').SignalConnection, userId: number, deviceId: string,
   *   rtcUrl: string, rtcToken: (channel: string) => Promise<string>, media?: (video: boolean) => Promise<MediaStream>,
   *   ringTimeoutMillis?: number, iceTransportPolicy?: 'all' | 'relay', messageTTLSeconds?: number,
   *   now?: () => number, makeId?: () => string}} options
   */
  constructor({ signal, userId, deviceId, rtcUrl, rtcToken, media, ringTimeoutMillis = 15000, iceTransportPolicy = 'all',
    messageTTLSeconds = 0, now = () => Date.now(), makeId = randomUUID }) {
    super();
    Object.assign(this, { signal, userId, deviceId, rtcUrl, rtcToken, iceTransportPolicy, messageTTLSeconds, now, makeId });
    this.media = media ?? ((video) => navigator.mediaDevices.getUserMedia({ audio: true, video }));
    this.machine = new CallMachine({ userId, deviceId, ringTimeoutMillis });
    this.room = null;
    this.localStream = null;
    this.recording = null;
    this.timer = null;
    signal.addEventListener('message', (event) => {
      const frame = event.detail;
      // The message's age on the server's clock: how long ago the server received it from its sender.
      const serverAge = typeof frame.sentAt === 'number' ? Math.max(0, signal.serverNow() - frame.sentAt) : undefined;
      this.#input({ type: 'received', from: frame.from, body: frame.body, serverAge });
    });
    signal.addEventListener('place_call', (event) => {
      const { callee, video, callId } = event.detail;
      this.call(Number(callee), { video: video !== false, callId }).catch(() => {});
    });
  }

  /** The state as CallAPI numbers it (`CallState`). */
  get state() {
    return this.machine.callState;
  }

  /** The current call's `{id, peer, roomId, role, video}`, or `null`. */
  get currentCall() {
    return this.machine.call;
  }

  /** Calls `peer` (a user id); `callId` and the room are made here unless given. */
  async call(peer, { video = true, callId = this.makeId() } = {}) {
    const roomId = `call-${callId}`.slice(0, 64).replace(/[^A-Za-z0-9._-]/g, '-');
    this.#expect(this.#input({ type: 'call', peer, video, callId, roomId }));
  }

  accept() {
    this.#expect(this.#input({ type: 'accept' }));
  }

  reject(reason = 'rejected') {
    this.#expect(this.#input({ type: 'reject', reason }));
  }

  cancel() {
    this.#expect(this.#input({ type: 'cancel' }));
  }

  hangup(reason = 'hangup') {
    this.#expect(this.#input({ type: 'hangup', reason }));
  }

  #expect(actions) {
    const refused = actions.find((action) => action.type === 'refused');
    if (refused) throw new Error(refused.message);
  }

  /** Feeds one input and performs its actions; returns them. */
  #input(input) {
    const now = this.now();
    const actions = this.machine.handle(input, now);
    for (const action of actions) this.#perform(action, now);
    this.#schedule();
    return actions;
  }

  #schedule() {
    clearTimeout(this.timer);
    const next = this.machine.nextDeadline();
    if (next === null) return;
    this.timer = setTimeout(() => this.#input({ type: 'tick' }), Math.max(0, next - this.now()));
  }

  #perform(action, now) {
    switch (action.type) {
      case 'send': return this.#send(action);
      case 'stateChanged': {
        const call = this.machine.call;
        if (action.state === CallState.calling && !this.recording) {
          this.recording = { callId: call.id, marks: [], quality: [] };
        }
        this.#mark(`state.${NAMES.state[action.state]}`, now, NAMES.reason[action.reason]);
        if (action.event !== CallEvent.none) this.#mark(`event.${NAMES.event[action.event]}`, now);
        return this.#emit('stateChanged', { ...action, callId: call?.id, peer: call?.peer });
      }
      case 'event':
        this.#mark(`event.${NAMES.event[action.event]}`, now, action.reason === undefined ? undefined : String(action.reason));
        return this.#emit('event', action);
      case 'error':
        this.#mark(`error.${action.code}`, now, action.message);
        return this.#emit('error', action);
      case 'joinRoom': return this.#join(action);
      case 'leaveRoom': return this.#leave();
      case 'ended': return this.#report();
      case 'log': return this.#emit('log', action);
      case 'refused': return;
    }
  }

  #send({ to, body, callId, tag, retry }) {
    // Calls ring offline devices (a push); the server copies each message to this user's other sessions.
    const { message } = readMessage(body);
    const push = message ? pushMark(message) : undefined;
    this.signal.send(to, body, { ttl: this.messageTTLSeconds || undefined, push, copy: true }).then(
      () => tag && this.#input({ type: 'delivered', tag, callId }),
      (error) => !retry && tag && this.#input({ type: 'sendFailed', tag, callId, message: error.message }),
    );
  }

  async #join({ roomId, video }) {
    const call = this.machine.call;
    try {
      if (!this.localStream) {
        this.localStream = await this.media(video);
        this.#emit('localStream', { stream: this.localStream });
      }
      if (this.machine.call !== call) return; // the call ended while the camera started
      const token = await this.rtcToken(roomId);
      if (this.machine.call !== call) return;
      const room = new RtcRoom({
        url: this.rtcUrl, channel: roomId, uid: this.userId, device: this.deviceId, token,
        localStream: this.localStream, iceTransportPolicy: this.iceTransportPolicy, now: this.now,
      });
      this.room = room;
      const forward = (type, handler) => room.addEventListener(type, (event) => this.room === room && handler(event.detail));
      forward('localJoined', () => this.#input({ type: 'rtc', event: 'localJoined' }));
      forward('remoteJoined', ({ uid }) => this.#input({ type: 'rtc', event: 'remoteJoined', uid }));
      forward('remoteLeft', ({ uid, reason }) => this.#input({ type: 'rtc', event: 'remoteLeft', uid, reason }));
      forward('firstFrame', ({ uid, kind }) => {
        if (kind === (call.video ? 'video' : 'audio')) this.#input({ type: 'rtc', event: 'firstFrame', uid });
      });
      forward('localPublished', ({ kind }) => this.#input({ type: 'rtc', event: kind === 'video' ? 'localVideoPublished' : 'localAudioPublished' }));
      forward('remoteStream', (detail) => this.#emit('remoteStream', detail));
      forward('quality', ({ uid, quality }) => {
        const recording = this.recording;
        if (recording && recording.quality.length < REPORT_LIMITS.quality) recording.quality.push({ at: this.now(), peer: uid, quality: clean(quality) });
        this.#emit('quality', { uid, quality });
      });
      forward('warning', ({ message }) => this.#emit('log', { level: 'warning', message }));
      await room.join();
    } catch (error) {
      if (this.machine.call === call) this.#input({ type: 'rtc', event: 'joinFailed', message: error.message ?? String(error) });
    }
  }

  #leave() {
    this.room?.leave();
    this.room = null;
    this.localStream?.getTracks().forEach((track) => track.stop());
    this.localStream = null;
  }

  #mark(name, at, detail) {
    const recording = this.recording;
    if (!recording) return;
    const room = REPORT_LIMITS.events - recording.marks.length;
    if (room > 1) recording.marks.push({ name, at, detail: detail?.slice(0, REPORT_LIMITS.detail) || undefined });
    else if (room === 1) recording.marks.push({ name: 'report.cut', at, detail: 'more marks than a report carries' });
  }

  /** Sends what this device saw of the call that ended (docs/timeline.md); a refusal is reported, not thrown. */
  #report() {
    const recording = this.recording;
    this.recording = null;
    const clock = this.signal.clockOffset;
    if (!recording || !clock) return;
    const report = { callId: recording.callId, device: this.deviceId, clock, events: recording.marks, quality: recording.quality };
    this.signal.report(report).then(
      () => this.#emit('reported', { callId: recording.callId }),
      (error) => this.#emit('reported', { callId: recording.callId, error: error.message }),
    );
  }

  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}

/**
 * The push mark of a call message as `readMessage` reads it (docs/push.md): calls ring, cancels withdraw, accepts and
 * rejects answer.
 */
export function pushMark(message) {
  const callId = message.callId;
  switch (message.action) {
    case Action.videoCall: return { kind: 'call', callId, video: true };
    case Action.audioCall: return { kind: 'call', callId, video: false };
    case Action.cancel: return { kind: 'withdraw', callId, reason: message.cancelByInternal ? 'expired' : 'cancelled' };
    case Action.accept: return { kind: 'answer', callId, reason: 'answeredElsewhere' };
    case Action.reject: return { kind: 'answer', callId, reason: 'declinedElsewhere' };
    default: return undefined;
  }
}

/** A quality sample without the keys it has no value for (the report's JSON leaves them out). */
function clean(quality) {
  return Object.fromEntries(Object.entries(quality).filter(([, value]) => value !== undefined && Number.isFinite(value)));
}

/** A random (version 4) UUID; `crypto.randomUUID` exists only in secure contexts, `getRandomValues` everywhere. */
export function randomUUID() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
