// The JavaScript call machine, input by input (node --test Tests/Web; scripts/test.sh runs it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Action, BUSY_REASON, CallEvent, CallMachine, CallState, RETRY, StateReason, writeMessage } from '../../Web/callapi/index.js';

const ME = 1001;
const PEER = 1002;

function machine(options = {}) {
  return new CallMachine({ userId: ME, deviceId: 'web-a', ringTimeoutMillis: 15000, ...options });
}

/** A message from `from` as the server relays it. */
function incoming(from, action, { callId = 'c-1', messageId, reliable = false, deviceId, fields = {}, timestamp = 0 } = {}) {
  return {
    type: 'received', from: String(from), serverAge: 0,
    body: writeMessage({ action, callId, fromUserId: from, timestamp, messageId, deviceId, reliable, fields }),
  };
}

const sends = (actions) => actions.filter((a) => a.type === 'send').map((a) => ({ to: a.to, ...JSON.parse(a.body) }));
const changes = (actions) => actions.filter((a) => a.type === 'stateChanged');

test('a call sends the call message, rings as calling and joins the room', () => {
  const m = machine();
  const actions = m.handle({ type: 'call', peer: PEER, video: true, callId: 'c-1', roomId: 'room-1' }, 1000);
  const [message] = sends(actions);
  assert.equal(message.to, '1002');
  assert.equal(message.message_action, Action.videoCall);
  assert.equal(message.remoteUserId, PEER);
  assert.equal(message.fromRoomId, 'room-1');
  assert.equal(message.reliability, 1);
  assert.equal(message.deviceId, 'web-a');
  assert.deepEqual(changes(actions).map((c) => [c.state, c.reason]), [[CallState.calling, StateReason.localVideoCall]]);
  assert.ok(actions.some((a) => a.type === 'joinRoom' && a.roomId === 'room-1'));
  assert.equal(m.callState, CallState.calling);
});

test('the caller connects on the accept and the first frame, with the cost map, and hangs up', () => {
  const m = machine();
  m.handle({ type: 'call', peer: PEER, video: true, callId: 'c-1', roomId: 'room-1' }, 1000);
  let actions = m.handle(incoming(PEER, Action.accept), 1400);
  assert.deepEqual(changes(actions).map((c) => [c.state, c.reason]), [[CallState.connecting, StateReason.remoteAccepted]]);
  m.handle({ type: 'rtc', event: 'localJoined' }, 1100);
  actions = m.handle({ type: 'rtc', event: 'firstFrame', uid: PEER }, 1700);
  const [connected] = changes(actions);
  assert.equal(connected.state, CallState.connected);
  assert.equal(connected.reason, StateReason.recvRemoteFirstFrame);
  assert.deepEqual(connected.info.costTimeMap, { acceptCall: 400, localUserJoinChannel: 100, recvFirstFrame: 700 });
  actions = m.handle({ type: 'hangup', reason: 'bye' }, 2000);
  assert.equal(sends(actions)[0].message_action, Action.hangup);
  assert.equal(sends(actions)[0].hangupReason, 'bye');
  assert.deepEqual(changes(actions).map((c) => [c.state, c.reason]), [[CallState.prepared, StateReason.localHangup]]);
  assert.ok(actions.some((a) => a.type === 'leaveRoom'));
  assert.ok(actions.some((a) => a.type === 'ended' && a.wasConnected));
});

test('a first frame before the accept is remembered and connects at once on the accept', () => {
  const m = machine();
  m.handle({ type: 'call', peer: PEER, video: false, callId: 'c-1', roomId: 'room-1' }, 0);
  assert.equal(changes(m.handle({ type: 'rtc', event: 'firstFrame', uid: PEER }, 100)).length, 0);
  const actions = m.handle(incoming(PEER, Action.accept), 200);
  assert.deepEqual(changes(actions).map((c) => c.state), [CallState.connecting, CallState.connected]);
});

test('a callee rings, and a call from someone else meanwhile gets the busy reject stamped with that call', () => {
  const m = machine();
  let actions = m.handle(incoming(PEER, Action.videoCall, { fields: { remoteUserId: ME, fromRoomId: 'r' } }), 0);
  assert.deepEqual(changes(actions).map((c) => [c.state, c.reason]), [[CallState.calling, StateReason.remoteVideoCall]]);
  actions = m.handle(incoming(1003, Action.audioCall, { callId: 'other', fields: { remoteUserId: ME, fromRoomId: 'r3' } }), 10);
  const [busy] = sends(actions);
  assert.equal(busy.to, '1003');
  assert.equal(busy.message_action, Action.reject);
  assert.equal(busy.callId, 'other');
  assert.equal(busy.rejectByInternal, 1);
  assert.equal(busy.rejectReason, BUSY_REASON);
  assert.equal(changes(actions).length, 0);
  assert.equal(m.call.peer, PEER);
});

test('a call older than the ring timeout does not ring', () => {
  const m = machine();
  const stale = { ...incoming(PEER, Action.videoCall, { fields: { remoteUserId: ME, fromRoomId: 'r' } }), serverAge: 16500 };
  assert.equal(changes(m.handle(stale, 0)).length, 0);
  assert.equal(m.callState, CallState.prepared);
});

test('a repeated message acts once but is acknowledged each time', () => {
  const m = machine();
  const call = incoming(PEER, Action.videoCall, { messageId: 7, reliable: true, fields: { remoteUserId: ME, fromRoomId: 'r' } });
  const first = m.handle(call, 0);
  const second = m.handle(call, 50);
  assert.equal(changes(first).length, 1);
  assert.equal(changes(second).length, 0);
  for (const actions of [first, second]) {
    const [ack] = sends(actions);
    assert.equal(ack.message_action, Action.ack);
    assert.equal(ack.ackMessageId, 7);
    assert.equal(ack.inCall, 1);
  }
});

test('a message for another call of the same peer does nothing', () => {
  const m = machine();
  m.handle({ type: 'call', peer: PEER, video: true, callId: 'c-2', roomId: 'room-2' }, 0);
  const late = m.handle(incoming(PEER, Action.hangup, { callId: 'c-1' }), 100);
  assert.equal(changes(late).length, 0);
  assert.equal(m.callState, CallState.calling);
});

test('to a peer that acknowledges, a hangup is retried with backoff until acknowledged', () => {
  const m = machine();
  m.handle(incoming(PEER, Action.videoCall, { messageId: 1, reliable: true, fields: { remoteUserId: ME, fromRoomId: 'r' } }), 0);
  m.handle({ type: 'accept' }, 10);
  const hangup = sends(m.handle({ type: 'hangup', reason: 'x' }, 100)).find((s) => s.message_action === Action.hangup);
  const resentAt = [];
  for (let t = 100; t <= 100 + RETRY.boundMillis + 1000; t += 50) {
    for (const s of sends(m.handle({ type: 'tick' }, t))) if (s.message_action === Action.hangup) resentAt.push(t - 100);
    if (t - 100 === 3600) m.handle(incoming(PEER, Action.ack, { callId: 'c-1', messageId: 9, reliable: true, fields: { ackMessageId: hangup.messageId, inCall: 0 } }), t);
  }
  assert.deepEqual(resentAt, [500, 1500, 3500]);
  assert.equal(m.delivery.size, 0);
});

test('to a peer never heard from, nothing is sent twice', () => {
  const m = machine();
  m.handle({ type: 'call', peer: PEER, video: true, callId: 'c-1', roomId: 'r' }, 0);
  let resent = 0;
  for (let t = 0; t < 14000; t += 100) resent += sends(m.handle({ type: 'tick' }, t)).length;
  assert.equal(resent, 0);
});

test('the ring timer cancels with cancelCallByInternal 1', () => {
  const m = machine();
  m.handle({ type: 'call', peer: PEER, video: true, callId: 'c-1', roomId: 'r' }, 0);
  assert.equal(m.nextDeadline(), 15000);
  const actions = m.handle({ type: 'tick' }, 15000);
  const [cancel] = sends(actions);
  assert.equal(cancel.message_action, Action.cancel);
  assert.equal(cancel.cancelCallByInternal, 1);
  assert.deepEqual(changes(actions).map((c) => [c.state, c.reason, c.event]), [[CallState.prepared, StateReason.callingTimeout, CallEvent.callingTimeout]]);
});

test('a reliable peer silent for 8 s while calling is lost', () => {
  const m = machine();
  m.handle(incoming(PEER, Action.videoCall, { messageId: 1, reliable: true, fields: { remoteUserId: ME, fromRoomId: 'r' } }), 0);
  let keepAlives = 0;
  let lost = null;
  for (let t = 100; t <= 9000 && !lost; t += 100) {
    const actions = m.handle({ type: 'tick' }, t);
    keepAlives += sends(actions).filter((s) => s.message_action === Action.keepAlive).length;
    lost = changes(actions).find((c) => c.reason === StateReason.peerLost) ? t : null;
  }
  assert.equal(lost, 8000);
  assert.equal(keepAlives, 3);
});

test('a keep-alive answered from no call ends the call as peer lost', () => {
  const m = machine();
  m.handle(incoming(PEER, Action.videoCall, { messageId: 1, reliable: true, fields: { remoteUserId: ME, fromRoomId: 'r' } }), 0);
  const keepAlive = sends(m.handle({ type: 'tick' }, 2000)).find((s) => s.message_action === Action.keepAlive);
  const actions = m.handle(incoming(PEER, Action.ack, { messageId: 2, reliable: true, fields: { ackMessageId: keepAlive.messageId, inCall: 0 } }), 2100);
  assert.deepEqual(changes(actions).map((c) => c.reason), [StateReason.peerLost]);
});

test('glare: the lower callId wins on both sides', () => {
  const a = machine();
  a.handle({ type: 'call', peer: PEER, video: true, callId: 'b-call', roomId: 'room-b' }, 0);
  const actions = a.handle(incoming(PEER, Action.videoCall, { callId: 'a-call', fields: { remoteUserId: ME, fromRoomId: 'room-a' } }), 10);
  assert.equal(a.call.id, 'a-call');
  assert.equal(a.callState, CallState.connecting);
  assert.equal(sends(actions).find((s) => s.message_action === Action.accept).callId, 'a-call');
  const b = machine();
  b.handle({ type: 'call', peer: PEER, video: true, callId: 'a-call', roomId: 'room-a' }, 0);
  assert.equal(sends(b.handle(incoming(PEER, Action.videoCall, { callId: 'b-call', fields: { remoteUserId: ME, fromRoomId: 'room-b' } }), 10)).length, 0);
  assert.equal(b.call.id, 'a-call');
});

test('a copy of this user\'s accept on another device stops the ring here', () => {
  const m = machine();
  m.handle(incoming(PEER, Action.videoCall, { fields: { remoteUserId: ME, fromRoomId: 'r' } }), 0);
  const copy = incoming(ME, Action.accept, { deviceId: 'phone' });
  const actions = m.handle(copy, 100);
  assert.deepEqual(changes(actions).map((c) => [c.reason, c.event]), [[StateReason.answeredElsewhere, CallEvent.answeredElsewhere]]);
  assert.equal(sends(actions).length, 0);
});

test('a deployed client\'s busy reject, stamped with its own call, ends our call as busy', () => {
  const m = machine();
  m.handle({ type: 'call', peer: PEER, video: true, callId: 'c-1', roomId: 'r' }, 0);
  const actions = m.handle(incoming(PEER, Action.reject, { callId: 'its-own', fields: { rejectByInternal: 1, rejectReason: 'busy' } }), 10);
  assert.deepEqual(changes(actions).map((c) => c.reason), [StateReason.remoteCallBusy]);
});

test('requests in the wrong state are refused and change nothing', () => {
  const m = machine();
  for (const request of ['accept', 'reject', 'cancel', 'hangup']) {
    const actions = m.handle({ type: request }, 0);
    assert.ok(actions.some((a) => a.type === 'refused'), request);
    assert.equal(m.callState, CallState.prepared);
  }
  m.handle({ type: 'call', peer: PEER, video: true, callId: 'c', roomId: 'r' }, 0);
  assert.ok(m.handle({ type: 'call', peer: 1003, video: true, callId: 'd', roomId: 'r2' }, 1).some((a) => a.type === 'refused'));
  assert.equal(m.call.id, 'c');
  assert.ok(m.handle({ type: 'call', peer: ME, video: true, callId: 'e', roomId: 'r' }, 1).some((a) => a.type === 'refused'));
});

test('malformed messages and forged senders are dropped', () => {
  const m = machine();
  for (const body of ['nope', '[]', '{"message_version":"2.0","message_action":0,"callId":"x"}',
    '{"message_version":"1.0","message_action":99,"callId":"x"}',
    '{"message_version":"1.0","message_action":0,"callId":"x","fromRoomId":5,"remoteUserId":1001}']) {
    assert.equal(changes(m.handle({ type: 'received', from: '1002', body }, 0)).length, 0, body);
  }
  // The server's stamp, not the body's fromUserId, says who sent it: a "hangup from 1002" sent by 1003 does nothing.
  m.handle({ type: 'call', peer: PEER, video: true, callId: 'c-1', roomId: 'r' }, 0);
  const forged = { type: 'received', from: '1003', body: writeMessage({ action: Action.cancel, callId: 'c-1', fromUserId: PEER, timestamp: 0 }) };
  assert.equal(changes(m.handle(forged, 10)).length, 0);
  assert.equal(m.callState, CallState.calling);
});
