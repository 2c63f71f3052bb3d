// The browser softphone served at /phone (docs/web.md): the JavaScript client in a page. `window.phone` exposes
// the client to scripts (the browser tests drive the page through it).
import { CallClient, CallEvent, CallState, SignalConnection, StateReason, randomUUID } from '/callapi/index.js';

const $ = (id) => document.getElementById(id);
const names = (table) => Object.fromEntries(Object.entries(table).map(([name, value]) => [value, name]));
const stateNames = names(CallState);
const reasonNames = names(StateReason);
const eventNames = names(CallEvent);
const base = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`;
// Fragment settings (kept out of server logs): `user` logs in at once, `token` is a pasted login token, `ring` the
// ring timeout in ms, `skew` ms added to this page's clock (a device whose clock is off: the time line corrects it).
const fragment = new URLSearchParams(location.hash.slice(1));
const skew = Number(fragment.get('skew') ?? 0);
const now = () => Date.now() + skew;

const phone = {
  client: null,
  signal: null,
  online: [],
  /** Every state change and event, oldest first: `{at, kind, name, detail}`. */
  history: [],
  remoteStream: null,
  /** The page's own readings of the media now: `getStats` of the call's peer connections. */
  async stats() {
    const room = phone.client?.room;
    if (!room) return null;
    const result = { video: null, audio: null, outboundVideo: null, outboundAudio: null, codecs: [] };
    for (const link of room.links.values()) {
      const report = [...(await link.pc.getStats()).values()];
      const pick = (type, kind) => report.find((s) => s.type === type && s.kind === kind) ?? null;
      result.video = pick('inbound-rtp', 'video');
      result.audio = pick('inbound-rtp', 'audio');
      result.outboundVideo = pick('outbound-rtp', 'video');
      result.outboundAudio = pick('outbound-rtp', 'audio');
      result.codecs = report.filter((s) => s.type === 'codec').map((s) => `${s.mimeType}/${s.payloadType}`);
    }
    return result;
  },
  /** Whether the remote video shows moving pictures: two samples of its pixels, 300 ms apart, differ. */
  async remotePicturesMove() {
    const video = $('remote-video');
    if (!video.videoWidth) return false;
    const canvas = document.createElement('canvas');
    canvas.width = 64;
    canvas.height = 48;
    const context = canvas.getContext('2d', { willReadFrequently: true });
    const sample = () => {
      context.drawImage(video, 0, 0, 64, 48);
      return context.getImageData(0, 0, 64, 48).data;
    };
    const first = sample();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = sample();
    let changed = 0;
    for (let i = 0; i < first.length; i += 4) if (Math.abs(first[i] - second[i]) > 8) changed += 1;
    return changed > 10;
  },
};
window.phone = phone;

function log(text) {
  const item = document.createElement('li');
  item.textContent = `${new Date().toISOString().slice(11, 23)} ${text}`;
  $('log').prepend(item);
  while ($('log').children.length > 200) $('log').lastChild.remove();
}

async function config() {
  const response = await fetch('/phone/config.json');
  return response.json();
}

/** A token from the server's token endpoint with the development server's public admin key. */
async function developmentToken(settings, userId, channel) {
  const response = await fetch('/v1/tokens', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${settings.developmentAdminKey}` },
    body: JSON.stringify(channel ? { userId: String(userId), channel, ttl: 3600 } : { userId: String(userId), ttl: 3600 }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `token endpoint answered ${response.status}`);
  return body.token;
}

/** A token from the app's backend (production): it knows who the user is from its own session. */
async function backendToken(settings, userId, channel) {
  const response = await fetch(settings.tokenUrl, {
    method: 'POST',
    credentials: 'include',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ userId: String(userId), channel }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `the token URL answered ${response.status}`);
  return body.token;
}

async function logIn(settings, userId, pastedToken) {
  const mint = settings.development ? developmentToken : backendToken;
  const deviceId = `web-${randomUUID().slice(0, 8)}`;
  const signal = new SignalConnection({ url: base, deviceId, now, token: pastedToken || (() => mint(settings, userId)) });
  signal.addEventListener('status', ({ detail }) => {
    $('status').textContent = `${userId}: ${detail.status}${detail.reason ? ` (${detail.reason})` : ''}`;
  });
  signal.addEventListener('presence_changed', ({ detail }) => {
    phone.online = detail.online ? [...new Set([...phone.online, detail.userId])] : phone.online.filter((u) => u !== detail.userId);
    showOnline(userId);
  });
  await signal.connect();
  phone.online = (await signal.subscribePresence()).online;
  showOnline(userId);
  const client = new CallClient({
    signal, userId, deviceId, now, rtcUrl: base, rtcToken: (channel) => mint(settings, userId, channel),
    ringTimeoutMillis: Number(fragment.get('ring') ?? settings.ringTimeoutMillis ?? 15000),
  });
  phone.signal = signal;
  phone.client = client;
  client.addEventListener('stateChanged', ({ detail }) => showState(detail));
  client.addEventListener('event', ({ detail }) => {
    phone.history.push({ at: Date.now(), kind: 'event', name: eventNames[detail.event] });
    log(`event ${eventNames[detail.event]}${detail.reason !== undefined ? ` ${detail.reason}` : ''}`);
  });
  client.addEventListener('error', ({ detail }) => log(`error ${detail.code}: ${detail.message}`));
  client.addEventListener('log', ({ detail }) => log(`${detail.level}: ${detail.message}`));
  client.addEventListener('localStream', ({ detail }) => ($('local-video').srcObject = detail.stream));
  client.addEventListener('remoteStream', ({ detail }) => {
    phone.remoteStream = detail.stream;
    $('remote-video').srcObject = detail.stream;
    $('remote-audio').srcObject = detail.stream;
  });
  client.addEventListener('reported', ({ detail }) => {
    log(detail.error ? `report refused: ${detail.error}` : `report kept for ${detail.callId}`);
    phone.history.push({ at: Date.now(), kind: 'reported', name: detail.callId, detail: detail.error });
    refreshHistory(userId);
  });
  $('login').hidden = true;
  $('phone').hidden = false;
  refreshHistory(userId);
}

function showOnline(self) {
  const list = $('online');
  list.replaceChildren();
  for (const user of phone.online.filter((u) => u !== String(self))) {
    const item = document.createElement('li');
    item.textContent = `${user} `;
    for (const video of [true, false]) {
      const button = document.createElement('button');
      button.textContent = video ? 'video' : 'audio';
      button.onclick = () => dial(Number(user), video);
      item.append(button, ' ');
    }
    list.append(item);
  }
}

function dial(user, video) {
  phone.client.call(user, { video }).catch((error) => log(`call refused: ${error.message}`));
}

function showState({ state, reason, callId, peer }) {
  phone.history.push({ at: Date.now(), kind: 'state', name: stateNames[state], detail: reasonNames[reason], callId });
  log(`state ${stateNames[state]} (${reasonNames[reason]})${callId ? ` call ${callId}` : ''}`);
  const call = phone.client.currentCall;
  const ringing = state === CallState.calling && call?.role === 'callee';
  $('ringing').hidden = !ringing;
  if (ringing) {
    $('ringing-from').textContent = String(call.peer);
    $('ringing-kind').textContent = call.video ? 'video' : 'audio';
  }
  $('in-call').hidden = !(call && !ringing);
  if (call && !ringing) {
    $('call-line').textContent = `${stateNames[state]} with ${call.peer} (${call.video ? 'video' : 'audio'})`;
    $('hangup').textContent = state === CallState.calling ? 'Cancel' : 'Hang up';
  }
  if (state === CallState.prepared) {
    $('remote-video').srcObject = null;
    $('local-video').srcObject = null;
    $('remote-audio').srcObject = null;
  }
}

async function refreshHistory(self) {
  try {
    const page = await phone.signal.calls({ limit: 20 });
    const body = $('history').tBodies[0];
    body.replaceChildren();
    for (const record of page.calls) {
      const row = body.insertRow();
      const outgoing = record.caller === String(self);
      const cells = [new Date(record.startedAt).toLocaleString(), outgoing ? record.callee : record.caller,
        outgoing ? 'out' : 'in', record.outcome, record.durationMillis ? `${Math.round(record.durationMillis / 1000)} s` : ''];
      for (const text of cells) row.insertCell().textContent = text;
      if (record.outcome === 'missed' && !outgoing) row.cells[3].className = 'missed';
    }
  } catch (error) {
    log(`history: ${error.message}`);
  }
}

async function start() {
  const settings = await config();
  if (!window.isSecureContext) {
    $('login-note').textContent = 'This page needs https (or localhost): browsers give cameras and microphones only to secure pages.';
  }
  $('token-row').hidden = settings.development;
  if (window.isSecureContext) $('login-note').textContent = settings.development
    ? 'Development server: your token is minted with its public key.'
    : settings.tokenUrl ? 'Tokens come from the app\'s backend.' : 'Paste a login token from your app\'s backend.';
  $('accept').onclick = () => phone.client.accept();
  $('reject').onclick = () => phone.client.reject('rejected');
  $('hangup').onclick = () => phone.client.hangup('hangup');
  $('dial-form').onsubmit = (event) => {
    event.preventDefault();
    dial(Number($('dial').value), event.submitter?.dataset.video !== '0');
  };
  const submit = (user, token) => logIn(settings, user, token).catch((error) => {
    $('login-note').textContent = `Login failed: ${error.message}`;
    phone.loginError = error.message;
  });
  $('login-form').onsubmit = (event) => {
    event.preventDefault();
    submit(Number($('user').value), $('token').value.trim());
  };
  if (fragment.get('user')) submit(Number(fragment.get('user')), fragment.get('token') ?? '');
}

phone.ready = start();
