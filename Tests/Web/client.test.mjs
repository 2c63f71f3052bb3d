// The JavaScript client's parts around the machine: the clock estimate, quality from getStats, the signaling
// connection (over a scripted WebSocket), push marks and ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClockOffsetEstimator, QualitySampler, SignalConnection, RtcRoom, CHANNEL_ELSEWHERE, rtcURL, pushMark, randomUUID, readMessage, writeMessage, Action } from '../../Web/callapi/index.js';

test('the clock estimate keeps the sample with the smallest round trip of the last eight', () => {
  const clock = new ClockOffsetEstimator();
  assert.equal(clock.estimate, null);
  // The server is 5000 ms ahead; round trips of 40, 10 and 90 ms, the 10 ms one skewed by its asymmetry only.
  clock.add({ sentAt: 0, receivedAt: 40, serverTime: 5030 });
  clock.add({ sentAt: 100, receivedAt: 110, serverTime: 5104 });
  clock.add({ sentAt: 200, receivedAt: 290, serverTime: 5280 });
  assert.deepEqual(clock.estimate, { offsetMillis: 4999, errorMillis: 5, samples: 3 });
  for (let i = 0; i < 8; i += 1) clock.add({ sentAt: 1000 * i + 1000, receivedAt: 1000 * i + 1050, serverTime: 6025 + 1000 * i });
  assert.equal(clock.estimate.samples, 8);
  assert.equal(clock.estimate.errorMillis, 25, 'the 10 ms sample is no longer among the last eight');
  clock.add({ sentAt: 10, receivedAt: 5, serverTime: 0 });
  clock.add({ sentAt: NaN, receivedAt: 5, serverTime: 0 });
  assert.equal(clock.estimate.errorMillis, 25, 'impossible samples are ignored');
});

test('quality per period from getStats counters', () => {
  const sampler = new QualitySampler();
  const stats = (audioPackets, audioLost, videoBytes, freezes) => [
    { type: 'inbound-rtp', kind: 'audio', packetsReceived: audioPackets, packetsLost: audioLost, bytesReceived: audioPackets * 80, jitter: 0.004, concealedSamples: 0, silentConcealedSamples: 0 },
    { type: 'inbound-rtp', kind: 'video', packetsReceived: 100, packetsLost: 0, bytesReceived: videoBytes, totalFreezesDuration: freezes },
    { type: 'candidate-pair', nominated: true, state: 'succeeded', currentRoundTripTime: 0.031 },
  ];
  assert.equal(sampler.sample(stats(0, 0, 0, 0), 0), null, 'the first reading is the baseline');
  assert.equal(sampler.sample(stats(50, 0, 1000, 0), 1000), null, 'not a full period yet');
  const quality = sampler.sample(stats(95, 5, 150000, 0.25), 2000);
  assert.equal(quality.periodMillis, 2000);
  assert.equal(quality.audioLossPercent, 5);
  assert.equal(quality.videoLossPercent, undefined, 'no video packets in the period');
  assert.equal(quality.jitterMillis, 4);
  assert.equal(quality.roundTripMillis, 31);
  assert.equal(quality.audioKbps, 30.4);
  assert.equal(quality.videoKbps, 600);
  assert.equal(quality.videoFreezeMillis, 250);
});

/** A WebSocket whose server side the test plays. */
class ScriptedSocket {
  static all = [];
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.readyState = 0;
    ScriptedSocket.all.push(this);
    queueMicrotask(() => {
      this.readyState = 1;
      this.onopen?.();
    });
  }
  send(text) {
    this.sent.push(JSON.parse(text));
  }
  close() {
    this.readyState = 3;
  }
  reply(frame) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  drop(code = 1006) {
    this.readyState = 3;
    this.onclose?.({ code });
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

test('the connection logs in, answers requests by id, samples the clock, and reconnects after a drop', async () => {
  ScriptedSocket.all = [];
  let clock = 1000;
  const connection = new SignalConnection({ url: 'ws://server:8080/', token: 'T', deviceId: 'web-1', WebSocket: ScriptedSocket, now: () => clock, random: () => 0 });
  const connected = connection.connect();
  await tick();
  const socket = ScriptedSocket.all[0];
  assert.equal(socket.url, 'ws://server:8080/v1/signal');
  assert.deepEqual(socket.sent[0], { type: 'login', id: 0, token: 'T', deviceId: 'web-1' });
  clock = 1020;
  socket.reply({ type: 'welcome', id: 0, userId: '1001', serverTime: 9010 });
  assert.equal((await connected).userId, '1001');
  assert.deepEqual(connection.clockOffset, { offsetMillis: 8000, errorMillis: 10, samples: 1 });

  const sent = connection.send('1002', 'hello', { copy: true });
  const frame = socket.sent.at(-1);
  assert.deepEqual({ ...frame, id: undefined }, { type: 'send', to: '1002', body: 'hello', copy: true, id: undefined });
  socket.reply({ type: 'answer', id: frame.id, result: 'delivered', sessions: 1 });
  assert.equal((await sent).result, 'delivered');
  const refused = connection.send('1003', 'hi');
  socket.reply({ type: 'answer', id: socket.sent.at(-1).id, result: 'failed', reason: 'peer_offline', message: 'offline' });
  await assert.rejects(refused, (error) => error.code === 'peer_offline');

  const lost = connection.send('1002', 'in flight');
  socket.drop();
  await assert.rejects(lost, (error) => error.code === 'connectionLost');
  assert.equal(connection.status, 'reconnecting');
  const queued = connection.send('1002', 'while down');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const second = ScriptedSocket.all[1];
  assert.ok(second, 'a new socket after the backoff');
  second.reply({ type: 'welcome', id: 0, userId: '1001', serverTime: 9100 });
  const resent = second.sent.at(-1);
  assert.equal(resent.body, 'while down', 'a send made while down goes out after the welcome');
  second.reply({ type: 'answer', id: resent.id, result: 'queued', ttl: 30 });
  assert.equal((await queued).result, 'queued');
  connection.close();
});

test('a refused login stops the connection: no reconnection after an invalid or expired token', async () => {
  ScriptedSocket.all = [];
  const connection = new SignalConnection({ url: 'ws://server', token: 'bad', WebSocket: ScriptedSocket });
  const login = connection.connect();
  await tick();
  ScriptedSocket.all[0].reply({ type: 'error', id: 0, code: 'invalid_token', message: 'bad signature' });
  await assert.rejects(login, (error) => error.code === 'invalid_token');
  assert.equal(connection.status, 'stopped');
  await assert.rejects(connection.send('1002', 'x'), (error) => error.code === 'stopped');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(ScriptedSocket.all.length, 1);
});

test('a session whose token will expire renews itself with a fresh token from the provider', async () => {
  ScriptedSocket.all = [];
  let issued = 0;
  const connection = new SignalConnection({ url: 'ws://server', token: async () => `T${++issued}`, WebSocket: ScriptedSocket });
  const renewed = new Promise((resolve) => connection.addEventListener('renewed', (event) => resolve(event.detail)));
  const login = connection.connect();
  await tick();
  await tick();
  const socket = ScriptedSocket.all[0];
  assert.equal(socket.sent[0].token, 'T1');
  socket.reply({ type: 'welcome', id: 0, userId: '1001', serverTime: 1 });
  await login;
  socket.reply({ type: 'token_will_expire', expiresAt: 60000, secondsLeft: 60 });
  await tick();
  await tick();
  const renew = socket.sent.at(-1);
  assert.equal(renew.type, 'renew');
  assert.equal(renew.token, 'T2');
  socket.reply({ type: 'renewed', id: renew.id, expiresAt: 3660000 });
  assert.equal((await renewed).expiresAt, 3660000);
  connection.close();
});

test('relayed messages and server events reach listeners', async () => {
  ScriptedSocket.all = [];
  const connection = new SignalConnection({ url: 'ws://server', token: 'T', WebSocket: ScriptedSocket });
  const seen = [];
  for (const type of ['message', 'presence_changed', 'call_withdrawn']) connection.addEventListener(type, (event) => seen.push([type, event.detail]));
  const login = connection.connect();
  await tick();
  const socket = ScriptedSocket.all[0];
  socket.reply({ type: 'welcome', id: 0, userId: '1001', serverTime: 1 });
  await login;
  socket.reply({ type: 'message', from: '1002', body: '{}', sentAt: 5, messageId: 'm-1' });
  socket.reply({ type: 'presence_changed', userId: '1003', online: true });
  socket.reply({ type: 'call_withdrawn', callId: 'c', reason: 'cancelled', at: 7 });
  socket.onmessage({ data: 'not json' });
  assert.deepEqual(seen.map(([type]) => type), ['message', 'presence_changed', 'call_withdrawn']);
  assert.equal(seen[0][1].from, '1002');
  connection.close();
});

test('push marks follow the call message: calls ring, cancels withdraw, answers settle the other devices', () => {
  const mark = (action, fields = {}) => pushMark(readMessage(writeMessage({ action, callId: 'c', fromUserId: 1, timestamp: 0, fields: { remoteUserId: 2, fromRoomId: 'r', ...fields } })).message);
  assert.deepEqual(mark(Action.videoCall), { kind: 'call', callId: 'c', video: true });
  assert.deepEqual(mark(Action.audioCall), { kind: 'call', callId: 'c', video: false });
  assert.deepEqual(mark(Action.cancel, { cancelCallByInternal: 1 }), { kind: 'withdraw', callId: 'c', reason: 'expired' });
  assert.deepEqual(mark(Action.cancel), { kind: 'withdraw', callId: 'c', reason: 'cancelled' });
  assert.deepEqual(mark(Action.accept), { kind: 'answer', callId: 'c', reason: 'answeredElsewhere' });
  assert.deepEqual(mark(Action.reject), { kind: 'answer', callId: 'c', reason: 'declinedElsewhere' });
  assert.equal(mark(Action.hangup), undefined);
  assert.equal(mark(Action.ack), undefined);
});

test('messages round-trip through the wire format, unknown keys kept in fields', () => {
  const body = writeMessage({ action: Action.reject, callId: 'c-9', fromUserId: 1002, timestamp: 42, messageId: 3, deviceId: 'd', reliable: true, fields: { rejectByInternal: 1, rejectReason: 'The user is currently busy' } });
  const { message } = readMessage(body.replace('{', '{"future":true,'));
  assert.equal(message.action, Action.reject);
  assert.equal(message.rejectByInternal, true);
  assert.equal(message.rejectReason, 'The user is currently busy');
  assert.equal(message.reliable, true);
  assert.equal(message.messageId, 3);
  assert.equal(message.fields.future, true);
  assert.match(readMessage('{"message_version":"1.0","message_action":2,"callId":"c","messageId":"7"}').problem, /messageId/);
  assert.match(readMessage('{"message_version":"1.0","message_action":2,"callId":"c","deviceId":""}').problem, /deviceId/);
});

test('random ids are version 4 UUIDs', () => {
  const ids = new Set(Array.from({ length: 100 }, randomUUID));
  assert.equal(ids.size, 100);
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('a channel join names its channel for the proxy, and follows a cluster to the node where the members meet', async () => {
  assert.equal(rtcURL('https://example.com/', 'call a'), 'wss://example.com/v1/rtc?channel=call%20a');
  assert.equal(rtcURL('ws://b:2/v1/rtc?channel=x', 'room'), 'ws://b:2/v1/rtc?channel=room');
  ScriptedSocket.all = [];
  const room = new RtcRoom({ url: 'ws://a:1', channel: 'room', uid: 1001, token: 't', WebSocket: ScriptedSocket });
  const joining = room.join();
  await new Promise((resolve) => setTimeout(resolve, 0));
  const [first] = ScriptedSocket.all;
  assert.equal(first.url, 'ws://a:1/v1/rtc?channel=room');
  assert.deepEqual(first.sent, [{ type: 'join', channel: 'room', uid: 1001, token: 't' }]);
  first.reply({ type: 'joinFailed', code: CHANNEL_ELSEWHERE, message: 'channel room meets on node b', location: 'ws://b:2' });
  first.drop(4018);
  await new Promise((resolve) => setTimeout(resolve, 0));
  const second = ScriptedSocket.all[1];
  assert.equal(second.url, 'ws://b:2/v1/rtc?channel=room');
  assert.equal(second.sent[0].type, 'join');
  second.reply({ type: 'joined', channel: 'room', uid: 1001, devices: [], expiresAt: 1 });
  const joined = await joining;
  assert.equal(joined.type, 'joined');
  room.leave();

  // Without an address, or sent on too often, the join fails with the server's code.
  ScriptedSocket.all = [];
  const lost = new RtcRoom({ url: 'ws://a:1', channel: 'room', uid: 1001, token: 't', WebSocket: ScriptedSocket });
  const refused = lost.join();
  await new Promise((resolve) => setTimeout(resolve, 0));
  ScriptedSocket.all[0].reply({ type: 'joinFailed', code: CHANNEL_ELSEWHERE, message: 'channel room meets on node b' });
  await assert.rejects(refused, (error) => error.code === CHANNEL_ELSEWHERE);
});

test('a joined channel whose connection goes is joined again with its links kept, and given up after 20 s', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  let clock = 0;
  ScriptedSocket.all = [];
  const room = new RtcRoom({ url: 'ws://a:1', channel: 'room', uid: 1001, token: 't', WebSocket: ScriptedSocket, now: () => clock });
  const events = [];
  for (const type of ['localJoined', 'removed']) room.addEventListener(type, (event) => events.push([type, event.detail]));
  const joining = room.join();
  await Promise.resolve();
  ScriptedSocket.all[0].onopen();
  ScriptedSocket.all[0].reply({ type: 'joined', channel: 'room', uid: 1001, devices: [], expiresAt: 1 });
  await joining;

  // The node goes: a new socket 250 ms later, the same join on it; joined again, no second localJoined.
  ScriptedSocket.all[0].drop(1006);
  assert.equal(ScriptedSocket.all.length, 1);
  t.mock.timers.tick(250);
  assert.equal(ScriptedSocket.all.length, 2);
  ScriptedSocket.all[1].onopen();
  assert.equal(ScriptedSocket.all[1].sent[0].type, 'join');
  ScriptedSocket.all[1].reply({ type: 'joined', channel: 'room', uid: 1001, devices: [], expiresAt: 1 });
  assert.equal(room.outage, null);

  // The server stops (removed, serverShutdown): joined again too; a node not yet reachable is retried, doubling.
  ScriptedSocket.all[1].reply({ type: 'removed', code: 11, message: 'the server is shutting down' });
  t.mock.timers.tick(250);
  assert.equal(ScriptedSocket.all.length, 3);
  ScriptedSocket.all[2].drop(1006);
  t.mock.timers.tick(499);
  assert.equal(ScriptedSocket.all.length, 3, 'the second pause is 500 ms');
  t.mock.timers.tick(1);
  assert.equal(ScriptedSocket.all.length, 4);

  // Nothing answers for 20 s: the room gives up and says so.
  for (let i = 0; i < 20 && !room.closed; i += 1) {
    ScriptedSocket.all.at(-1).drop(1006);
    clock += 2000;
    t.mock.timers.tick(2000);
  }
  assert.equal(room.closed, true);
  assert.deepEqual(events.map(([type]) => type), ['localJoined', 'removed']);
  assert.equal(events[1][1].code, 100);

  // A refusal that is not about reaching the channel (a bar) ends the room at once.
  ScriptedSocket.all = [];
  const barred = new RtcRoom({ url: 'ws://a:1', channel: 'room', uid: 1001, token: 't', WebSocket: ScriptedSocket, now: () => clock });
  const ended = [];
  barred.addEventListener('removed', (event) => ended.push(event.detail.code));
  const first = barred.join();
  await Promise.resolve();
  ScriptedSocket.all[0].reply({ type: 'joined', channel: 'room', uid: 1001, devices: [], expiresAt: 1 });
  await first;
  ScriptedSocket.all[0].drop(1006);
  t.mock.timers.tick(250);
  ScriptedSocket.all[1].reply({ type: 'joinFailed', code: 5, message: 'barred' });
  assert.deepEqual(ended, [5]);
  assert.equal(barred.closed, true);
});
