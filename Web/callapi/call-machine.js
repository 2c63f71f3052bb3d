// The call state machine of one endpoint (docs/spec/call-behaviour.md, docs/reliability.md): pure and synchronous.
// `handle(input, now)` takes one input and returns the actions to perform, in order; `nextDeadline()` is a query
// (when to feed the next `tick`). The shell (CallClient) performs the actions; nothing here touches a socket, a
// timer or the clock.
//
// The state is one tagged object whose kinds own their data:
//   { kind: 'prepared' }
//   { kind: 'outgoing', call }    calling, as the caller
//   { kind: 'incoming', call }    calling, as the callee, not accepted
//   { kind: 'connecting', call }  both sides accepted, waiting for the first remote frame
//   { kind: 'connected', call }

import { Action, BUSY_REASON, CallEvent, CallState, StateReason, readMessage, writeMessage } from './wire.js';
import { BoundedSet, Delivery, Lifetime } from './delivery.js';

/** Timings of the liveness checks (docs/reliability.md, "Peer liveness"). */
export const LIVENESS = Object.freeze({
  keepAliveRingingMillis: 2000,
  keepAliveConnectedMillis: 3000,
  silenceRingingMillis: 8000,
  silenceConnectedMillis: 15000,
  remoteLeftGraceMillis: 3000,
  /** A call message older than the ring timeout plus this, by the server's receive time, does not ring. */
  staleSlackMillis: 1000,
});

const PUBLIC_STATE = { prepared: CallState.prepared, outgoing: CallState.calling, incoming: CallState.calling,
  connecting: CallState.connecting, connected: CallState.connected };

export class CallMachine {
  /**
   * @param {{userId: number, deviceId: string, ringTimeoutMillis?: number, reliable?: boolean,
   *   waitForFirstFrame?: boolean, extension?: object}} options
   */
  constructor({ userId, deviceId, ringTimeoutMillis = 15000, reliable = true, waitForFirstFrame = true, extension }) {
    this.userId = userId;
    this.deviceId = deviceId;
    this.ringTimeoutMillis = ringTimeoutMillis;
    this.reliable = reliable;
    this.waitForFirstFrame = waitForFirstFrame;
    this.extension = extension;
    this.state = { kind: 'prepared' };
    this.delivery = new Delivery();
    /** Peers whose messages carried our mark, or that acknowledged ours (bounded, lasts across calls). */
    this.reliablePeers = new BoundedSet(256);
    /** Keys of messages handled, for de-duplication (bounded). */
    this.handled = new BoundedSet(2048);
    this.nextMessageId = 1;
  }

  // MARK: queries

  /** The state as CallAPI numbers it. */
  get callState() {
    return PUBLIC_STATE[this.state.kind];
  }

  /** The current call (its id, peer, room, role, type), or `null`. */
  get call() {
    return this.state.kind === 'prepared' ? null : this.state.call;
  }

  /** When the machine next needs a `tick`; `null` when no timer runs. */
  nextDeadline() {
    const times = [this.delivery.nextDeadline()];
    const call = this.call;
    if (call) {
      if (this.state.kind !== 'connected') times.push(call.ringDeadline);
      if (call.peerReliable) times.push(call.nextKeepAliveAt, call.lastHeardAt + this.#silenceLimit());
      if (call.remoteLeftAt !== null) times.push(call.remoteLeftAt + LIVENESS.remoteLeftGraceMillis);
    }
    const defined = times.filter((time) => time !== null && time !== undefined);
    return defined.length ? Math.min(...defined) : null;
  }

  // MARK: inputs

  /** One input; the actions it causes, in order. */
  handle(input, now) {
    const actions = [];
    switch (input.type) {
      case 'call': this.#localCall(input, now, actions); break;
      case 'cancel': this.#localCancel(now, actions); break;
      case 'accept': this.#localAccept(now, actions); break;
      case 'reject': this.#localReject(input.reason, now, actions); break;
      case 'hangup': this.#localHangup(input.reason, now, actions); break;
      case 'received': this.#received(input, now, actions); break;
      case 'delivered': this.#delivered(input, now, actions); break;
      case 'sendFailed': this.#sendFailed(input, now, actions); break;
      case 'rtc': this.#rtc(input, now, actions); break;
      case 'tick': this.#tick(now, actions); break;
      default: throw new Error(`unknown input ${input.type}`);
    }
    return actions;
  }

  // MARK: local requests

  #refuse(request, actions) {
    actions.push({ type: 'refused', request, message: `${request} is not allowed while ${this.state.kind}` });
    actions.push({ type: 'event', event: CallEvent.stateMismatch });
  }

  #localCall({ peer, video, callId, roomId }, now, actions) {
    if (this.state.kind !== 'prepared') return this.#refuse('call', actions);
    if (!Number.isSafeInteger(peer) || peer <= 0 || peer === this.userId) {
      actions.push({ type: 'refused', request: 'call', message: `cannot call ${peer}` });
      return;
    }
    const call = this.#newCall({ id: callId, roomId, peer, video, role: 'caller', now });
    this.state = { kind: 'outgoing', call };
    const body = this.#send(actions, now, {
      action: video ? Action.videoCall : Action.audioCall, call, lifetime: Lifetime.whileCalling,
      fields: { remoteUserId: peer, fromRoomId: roomId }, tag: 'call',
    });
    const reason = video ? StateReason.localVideoCall : StateReason.localAudioCall;
    const event = video ? CallEvent.localVideoCall : CallEvent.localAudioCall;
    actions.push(this.#change(CallState.calling, reason, event, JSON.parse(body)));
    actions.push({ type: 'joinRoom', roomId, video });
    actions.push({ type: 'event', event: CallEvent.joinRTCStart });
  }

  #localCancel(now, actions) {
    if (this.state.kind !== 'outgoing') return this.#refuse('cancel', actions);
    const { call } = this.state;
    this.#send(actions, now, { action: Action.cancel, call, fields: { cancelCallByInternal: 0 } });
    this.#end(actions, StateReason.localCancelled, CallEvent.localCancelled, {});
  }

  #localAccept(now, actions) {
    if (this.state.kind !== 'incoming') return this.#refuse('accept', actions);
    const { call } = this.state;
    this.#send(actions, now, { action: Action.accept, call, lifetime: Lifetime.whileInCall });
    this.#cost(call, 'acceptCall', now);
    this.state = { kind: 'connecting', call };
    actions.push(this.#change(CallState.connecting, StateReason.localAccepted, CallEvent.localAccepted, {}));
    this.#connectedCheck(StateReason.localAccepted, now, actions);
  }

  #localReject(reason, now, actions) {
    if (this.state.kind !== 'incoming') return this.#refuse('reject', actions);
    const { call } = this.state;
    this.#send(actions, now, { action: Action.reject, call, fields: { rejectByInternal: 0, rejectReason: reason } });
    this.#end(actions, StateReason.localRejected, CallEvent.localRejected, { rejectReason: reason });
  }

  #localHangup(reason, now, actions) {
    switch (this.state.kind) {
      case 'outgoing': return this.#localCancel(now, actions);
      case 'incoming': return this.#localReject(reason, now, actions);
      case 'connecting':
      case 'connected': {
        const { call } = this.state;
        this.#send(actions, now, { action: Action.hangup, call, fields: { hangupReason: reason } });
        return this.#end(actions, StateReason.localHangup, CallEvent.localHangup, { hangupReason: reason });
      }
      default: return this.#refuse('hangup', actions);
    }
  }

  // MARK: received messages

  #received({ from, body, serverAge }, now, actions) {
    const read = readMessage(body);
    if (read.problem) {
      actions.push({ type: 'log', level: 'debug', message: `dropped a message from ${from}: ${read.problem}` });
      return;
    }
    const message = read.message;
    const sender = Number(from);
    if (!Number.isSafeInteger(sender) || sender <= 0 || String(sender) !== from) return;
    if (sender === this.userId) return this.#ownDeviceCopy(message, actions);

    if (message.reliable && this.reliable) this.reliablePeers.add(sender);
    this.#act(sender, message, serverAge, now, actions);
    // Acknowledged after it acted, so that `inCall` says where this endpoint is now (a call that just rang is one).
    if (message.reliable && this.reliable && message.messageId !== undefined && message.action !== Action.ack) {
      this.#sendAck(actions, now, sender, message, this.call !== null && this.call.peer === sender);
    }
  }

  #act(sender, message, serverAge, now, actions) {
    const call = this.call;
    if (call && call.peer === sender && message.callId === call.id) {
      call.lastHeardAt = now;
      if (message.reliable && this.reliable) call.peerReliable = true;
    }
    if (message.action === Action.ack) return this.#acknowledged(sender, message, now, actions);
    if (message.action === Action.keepAlive) return;

    const keys = [`${sender}|${message.callId}|a${message.action}|${message.answeredByDevice ?? ''}`];
    if (message.messageId !== undefined) keys.push(`${sender}|${message.callId}|#${message.messageId}`);
    if (keys.some((key) => this.handled.has(key))) return;
    keys.forEach((key) => this.handled.add(key));

    switch (message.action) {
      case Action.videoCall:
      case Action.audioCall: return this.#remoteCall(sender, message, serverAge, now, actions);
      case Action.cancel: return this.#remoteCancel(sender, message, now, actions);
      case Action.accept: return this.#remoteAccept(sender, message, now, actions);
      case Action.reject: return this.#remoteReject(sender, message, now, actions);
      case Action.hangup: return this.#remoteHangup(sender, message, now, actions);
    }
  }

  /** A copy of a message another device of this user sent (our server copies them): its answer to our ring. */
  #ownDeviceCopy(message, actions) {
    if (this.state.kind !== 'incoming' || message.deviceId === this.deviceId) return;
    if (message.callId !== this.state.call.id) return;
    if (message.action === Action.accept) {
      this.#end(actions, StateReason.answeredElsewhere, CallEvent.answeredElsewhere, { deviceId: message.deviceId });
    } else if (message.action === Action.reject) {
      this.#end(actions, StateReason.rejectedElsewhere, CallEvent.rejectedElsewhere, { deviceId: message.deviceId });
    }
  }

  #acknowledged(sender, message, now, actions) {
    if (message.ackMessageId === undefined) return;
    this.reliablePeers.add(sender);
    this.delivery.acknowledged(sender, message.ackMessageId);
    const call = this.call;
    if (!call || call.peer !== sender || message.callId !== call.id) return;
    call.peerReliable = true;
    // Only a keep-alive's answer says the peer left: an ack of the call message from a busy callee says inCall 0
    // too, and its busy reject follows.
    if (message.inCall === false && call.keepAliveIds.includes(message.ackMessageId)) {
      this.#peerLost(now, actions, 'the peer answered a keep-alive from no call');
    }
  }

  #remoteCall(sender, message, serverAge, now, actions) {
    if (message.remoteUserId !== this.userId) return;
    if (serverAge !== undefined && serverAge > this.ringTimeoutMillis + LIVENESS.staleSlackMillis) {
      actions.push({ type: 'log', level: 'info', message: `a call from ${sender} ${serverAge} ms old does not ring` });
      return;
    }
    const video = message.action === Action.videoCall;
    const call = this.call;
    if (!call) {
      const incoming = this.#newCall({ id: message.callId, roomId: message.roomId, peer: sender, video, role: 'callee', now });
      incoming.peerReliable = message.reliable && this.reliable;
      incoming.callerDevice = message.deviceId ?? null;
      this.state = { kind: 'incoming', call: incoming };
      const reason = video ? StateReason.remoteVideoCall : StateReason.remoteAudioCall;
      const event = video ? CallEvent.remoteVideoCall : CallEvent.remoteAudioCall;
      actions.push(this.#change(CallState.calling, reason, event, message.fields));
      actions.push({ type: 'joinRoom', roomId: message.roomId, video });
      actions.push({ type: 'event', event: CallEvent.joinRTCStart });
      return;
    }
    if (call.peer === sender && this.state.kind === 'outgoing') {
      // Glare: both apply one rule, the lower callId wins; the loser takes the winner's call and accepts it.
      if (message.callId >= call.id) return;
      this.delivery.ended(call.id);
      actions.push({ type: 'leaveRoom' });
      const adopted = this.#newCall({ id: message.callId, roomId: message.roomId, peer: sender, video, role: 'callee', now });
      adopted.startedAt = call.startedAt;
      adopted.peerReliable = message.reliable && this.reliable;
      this.state = { kind: 'incoming', call: adopted };
      actions.push({ type: 'joinRoom', roomId: message.roomId, video });
      return this.#localAccept(now, actions);
    }
    if (call.peer === sender && this.state.kind === 'incoming') {
      // The caller called again: the same ring, the new call's id and room.
      const roomChanged = call.roomId !== message.roomId;
      call.id = message.callId;
      call.roomId = message.roomId;
      if (roomChanged) actions.push({ type: 'leaveRoom' }, { type: 'joinRoom', roomId: message.roomId, video });
      return;
    }
    // Busy: refuse the other call, stamped with its own id; nothing else changes.
    const busy = { id: message.callId, peer: sender, peerReliable: message.reliable && this.reliable };
    this.#send(actions, now, {
      action: Action.reject, call: busy, fields: { rejectByInternal: 1, rejectReason: BUSY_REASON },
    });
  }

  #remoteCancel(sender, message, now, actions) {
    const call = this.call;
    if (!call || call.peer !== sender || message.callId !== call.id) return;
    if (message.answeredByDevice !== undefined) {
      if (message.answeredByDevice === this.deviceId) return; // the caller bound the call to this device
      return this.#end(actions, StateReason.answeredElsewhere, CallEvent.answeredElsewhere, { deviceId: message.answeredByDevice });
    }
    if (message.rejectedByDevice !== undefined && message.rejectedByDevice !== this.deviceId) {
      return this.#end(actions, StateReason.rejectedElsewhere, CallEvent.rejectedElsewhere, { deviceId: message.rejectedByDevice });
    }
    if (message.cancelByInternal) {
      return this.#end(actions, StateReason.remoteCallingTimeout, CallEvent.remoteCallingTimeout, message.fields);
    }
    this.#end(actions, StateReason.remoteCancelled, CallEvent.remoteCancelled, message.fields);
  }

  #remoteAccept(sender, message, now, actions) {
    const call = this.call;
    if (!call || call.peer !== sender || message.callId !== call.id) return;
    if (this.state.kind !== 'outgoing') {
      // A second device's accept of a call bound to the first: say again which device has it.
      if (call.boundDevice && message.deviceId && message.deviceId !== call.boundDevice) this.#sendNotice(call, now, actions);
      return;
    }
    call.boundDevice = message.deviceId ?? null;
    this.delivery.leftCalling(call.id);
    this.#cost(call, 'acceptCall', now);
    this.state = { kind: 'connecting', call };
    actions.push(this.#change(CallState.connecting, StateReason.remoteAccepted, CallEvent.remoteAccepted, message.fields));
    if (call.boundDevice && call.peerReliable) this.#sendNotice(call, now, actions);
    this.#connectedCheck(StateReason.remoteAccepted, now, actions);
  }

  #remoteReject(sender, message, now, actions) {
    const call = this.call;
    if (!call || call.peer !== sender) return;
    // The deployed clients stamp their busy reject with their own call's id (docs/reliability.md).
    const legacyBusy = message.rejectByInternal && !message.reliable && this.state.kind === 'outgoing';
    if (message.callId !== call.id && !legacyBusy) return;
    if (call.boundDevice && message.deviceId !== call.boundDevice) return this.#sendNotice(call, now, actions);
    if (this.state.kind !== 'outgoing' && this.state.kind !== 'connecting') return;
    if (message.deviceId && call.peerReliable) {
      this.#send(actions, now, { action: Action.cancel, call, fields: { cancelCallByInternal: 0, rejectedByDevice: message.deviceId } });
    }
    if (message.rejectByInternal) return this.#end(actions, StateReason.remoteCallBusy, CallEvent.remoteCallBusy, message.fields);
    this.#end(actions, StateReason.remoteRejected, CallEvent.remoteRejected, message.fields);
  }

  #remoteHangup(sender, message, now, actions) {
    const call = this.call;
    if (!call || call.peer !== sender || message.callId !== call.id) return;
    if (call.boundDevice && message.deviceId && message.deviceId !== call.boundDevice) return;
    this.#end(actions, StateReason.remoteHangup, CallEvent.remoteHangup, message.fields);
  }

  /** The caller's notice: one cancel to the callee user naming the device that has the call. */
  #sendNotice(call, now, actions) {
    this.#send(actions, now, { action: Action.cancel, call, fields: { cancelCallByInternal: 0, answeredByDevice: call.boundDevice } });
  }

  // MARK: delivery answers, RTC, timers

  #delivered({ tag, callId }, now, actions) {
    const call = this.call;
    if (tag !== 'call' || !call || call.id !== callId || call.costs.remoteUserRecvCall !== undefined) return;
    this.#cost(call, 'remoteUserRecvCall', now);
    actions.push({ type: 'event', event: CallEvent.remoteUserRecvCall });
  }

  #sendFailed({ tag, callId, message }, now, actions) {
    actions.push({ type: 'error', code: 'sendMessageFail', message });
    // A call message that reached nobody (the user is offline, no server holds it) rings nowhere: say so at
    // once rather than after the ring timeout, as the state stays calling until the app cancels (CallAPI).
    if (tag === 'call' && this.state.kind === 'outgoing' && this.state.call.id === callId) {
      actions.push({ type: 'log', level: 'warning', message: `the call message was not delivered: ${message}` });
    }
  }

  #rtc({ event, uid, reason, message }, now, actions) {
    const call = this.call;
    if (!call) return;
    switch (event) {
      case 'localJoined':
        this.#cost(call, 'localUserJoinChannel', now);
        actions.push({ type: 'event', event: CallEvent.localJoined }, { type: 'event', event: CallEvent.joinRTCSuccessed });
        return;
      case 'joinFailed':
        actions.push({ type: 'error', code: 'rtcOccurError', message });
        return;
      case 'remoteJoined':
        if (uid !== call.peer) return;
        call.remoteLeftAt = null;
        this.#cost(call, 'remoteUserJoinChannel', now);
        actions.push({ type: 'event', event: CallEvent.remoteJoined });
        return;
      case 'remoteLeft':
        if (uid !== call.peer) return;
        call.remoteLeftAt = now;
        actions.push({ type: 'event', event: CallEvent.remoteLeft, reason });
        return;
      case 'firstFrame':
        if (uid !== call.peer || call.firstFrameAt !== null) return;
        call.firstFrameAt = now;
        this.#cost(call, 'recvFirstFrame', now);
        actions.push({ type: 'event', event: CallEvent.recvRemoteFirstFrame });
        this.#connectedCheck(StateReason.recvRemoteFirstFrame, now, actions);
        return;
      case 'localVideoPublished':
        this.#cost(call, 'localFirstFrameDidPublish', now);
        actions.push({ type: 'event', event: CallEvent.publishFirstLocalVideoFrame });
        return;
      case 'localAudioPublished':
        if (!call.video) this.#cost(call, 'localFirstFrameDidPublish', now);
        actions.push({ type: 'event', event: CallEvent.publishFirstLocalAudioFrame });
        return;
      case 'localVideoCaptured':
        this.#cost(call, 'localFirstFrameDidCapture', now);
        actions.push({ type: 'event', event: CallEvent.captureFirstLocalVideoFrame });
        return;
    }
  }

  #tick(now, actions) {
    for (const resend of this.delivery.due(now)) {
      actions.push({ type: 'send', to: String(resend.peer), body: resend.body, callId: resend.callId, retry: true });
    }
    const call = this.call;
    if (!call) return;
    if (this.state.kind !== 'connected' && now >= call.ringDeadline) {
      this.#send(actions, now, { action: Action.cancel, call, fields: { cancelCallByInternal: 1 } });
      return this.#end(actions, StateReason.callingTimeout, CallEvent.callingTimeout, {});
    }
    if (call.remoteLeftAt !== null && now >= call.remoteLeftAt + LIVENESS.remoteLeftGraceMillis) {
      return this.#peerLost(now, actions, 'the peer left the room and did not come back');
    }
    if (!call.peerReliable) return;
    if (now >= call.lastHeardAt + this.#silenceLimit()) {
      return this.#peerLost(now, actions, `nothing from the peer for ${now - call.lastHeardAt} ms`);
    }
    if (now >= call.nextKeepAliveAt) {
      const body = this.#send(actions, now, { action: Action.keepAlive, call, retried: false });
      call.keepAliveIds = [...call.keepAliveIds.slice(-7), JSON.parse(body).messageId];
      call.nextKeepAliveAt = now + (this.state.kind === 'connected' ? LIVENESS.keepAliveConnectedMillis : LIVENESS.keepAliveRingingMillis);
    }
  }

  /** The peer is gone: tell it anyway (it may be merely slow), and end the call. */
  #peerLost(now, actions, why) {
    const call = this.call;
    const action = { outgoing: Action.cancel, incoming: Action.reject }[this.state.kind] ?? Action.hangup;
    this.#send(actions, now, { action, call });
    actions.push({ type: 'log', level: 'warning', message: `peer ${call.peer} lost: ${why}` });
    this.#end(actions, StateReason.peerLost, CallEvent.peerLost, {});
  }

  // MARK: helpers

  #newCall({ id, roomId, peer, video, role, now }) {
    return {
      id, roomId, peer, video, role, startedAt: now, ringDeadline: now + this.ringTimeoutMillis, costs: {},
      firstFrameAt: null, connectedAt: null, remoteLeftAt: null, lastHeardAt: now,
      nextKeepAliveAt: now + LIVENESS.keepAliveRingingMillis, keepAliveIds: [],
      peerReliable: this.reliable && this.reliablePeers.has(peer), boundDevice: null, callerDevice: null,
    };
  }

  #silenceLimit() {
    return this.state.kind === 'connected' ? LIVENESS.silenceConnectedMillis : LIVENESS.silenceRingingMillis;
  }

  #cost(call, stage, now) {
    if (call.costs[stage] === undefined) call.costs[stage] = now - call.startedAt;
  }

  #connectedCheck(reason, now, actions) {
    if (this.state.kind !== 'connecting') return;
    const { call } = this.state;
    if (this.waitForFirstFrame && call.firstFrameAt === null) return;
    call.connectedAt = now;
    this.delivery.leftCalling(call.id);
    this.state = { kind: 'connected', call };
    call.nextKeepAliveAt = Math.min(call.nextKeepAliveAt, now + LIVENESS.keepAliveConnectedMillis);
    actions.push(this.#change(CallState.connected, reason, CallEvent.none, {
      fromRoomId: call.roomId, fromUserId: call.role === 'caller' ? this.userId : call.peer,
      remoteUserId: call.role === 'caller' ? call.peer : this.userId, costTimeMap: { ...call.costs },
    }));
  }

  /** Back to prepared: leave the room, stop the call's retries but the final messages', and say how it ended. */
  #end(actions, reason, event, info) {
    const call = this.call;
    const wasConnected = this.state.kind === 'connected';
    this.delivery.ended(call.id);
    this.state = { kind: 'prepared' };
    actions.push({ type: 'leaveRoom' });
    actions.push(this.#change(CallState.prepared, reason, event, info));
    actions.push({ type: 'ended', callId: call.id, peer: call.peer, role: call.role, reason, wasConnected, costs: { ...call.costs } });
  }

  #change(state, reason, event, info) {
    return { type: 'stateChanged', state, reason, event, info };
  }

  #sendAck(actions, now, peer, message, inCall) {
    const body = writeMessage({
      action: Action.ack, callId: message.callId, fromUserId: this.userId, timestamp: now,
      messageId: this.nextMessageId++, deviceId: this.deviceId, reliable: true,
      fields: { ackMessageId: message.messageId, inCall: inCall ? 1 : 0 },
    });
    actions.push({ type: 'send', to: String(peer), body, callId: message.callId, retry: false });
  }

  /**
   * Writes and sends one message of `call`; tracks it for retries when the peer is known to acknowledge (and
   * `retried` is not false). Returns the body.
   */
  #send(actions, now, { action, call, fields = {}, lifetime = Lifetime.untilAcknowledged, retried = true, tag }) {
    const messageId = this.nextMessageId++;
    const body = writeMessage({
      action, callId: call.id, fromUserId: this.userId, timestamp: now, messageId, deviceId: this.deviceId,
      reliable: this.reliable, extension: this.extension, fields,
    });
    const peerReliable = this.reliable && (call.peerReliable || this.reliablePeers.has(call.peer));
    if (peerReliable && retried) this.delivery.track({ peer: call.peer, messageId, callId: call.id, body, lifetime }, now);
    actions.push({ type: 'send', to: String(call.peer), body, callId: call.id, tag, retry: false });
    return body;
  }
}
