// One membership of an RTC channel (`/v1/rtc`, docs/protocol.md "Channels") with the browser's WebRTC: a peer
// connection to every member of another user, negotiated through the channel's relay with the signals our Swift
// engine speaks (`offer`, `answer`, `ice`, `restart`; docs/rtc-adapters.md). The member with the lower uid offers.
//
// Events (CustomEvent, `detail` as named): `localJoined` {iceServers}, `joinFailed` {code, message},
// `remoteJoined` {uid}, `remoteLeft` {uid, reason}, `remoteStream` {uid, stream}, `firstFrame` {uid, kind},
// `localPublished` {kind}, `quality` {uid, quality}, `removed` {code, message}, `warning` {message}.

export const ROOM_TIMING = Object.freeze({ statsPollMillis: 250, qualityIntervalMillis: 2000 });

/** `joinFailed` code: the channel's members meet on another node of the cluster (docs/protocol.md). */
export const CHANNEL_ELSEWHERE = 18;
const SERVER_SHUTDOWN = 11;
/** The client's own code when a channel's connection is lost for good (as the Swift client's). */
const CONNECTION_LOST = 100;
/** Codes after which a lost channel is joined again: lost, the server stopping, a cluster's node sending it on. */
const REJOINABLE = [CONNECTION_LOST, SERVER_SHUTDOWN, CHANNEL_ELSEWHERE];
const MAX_REDIRECTS = 2;
/** Joining a lost channel again: the first pause, the longest, and how long to keep trying. */
export const REJOIN = Object.freeze({ firstPauseMillis: 250, maxPauseMillis: 2000, limitMillis: 20000 });

/**
 * The channel endpoint of the server at `base`, naming the channel in the query (a cluster's proxy sends a
 * channel's members to one node by it; deploy/haproxy.cfg).
 */
export function rtcURL(base, channel) {
  const root = base.replace(/\/v1\/rtc.*$/, '').replace(/\/+$/, '').replace(/^http/, 'ws');
  return `${root}/v1/rtc?channel=${encodeURIComponent(channel)}`;
}

export class RtcRoom extends EventTarget {
  /**
   * @param {{url: string, channel: string, uid: number, device?: string, token: string, localStream: MediaStream,
   *   iceTransportPolicy?: 'all' | 'relay', extraIceServers?: object[], PeerConnection?: typeof RTCPeerConnection,
   *   WebSocket?: typeof WebSocket, now?: () => number}} options
   */
  constructor({ url, channel, uid, device, token, localStream, iceTransportPolicy = 'all', extraIceServers = [],
    PeerConnection = globalThis.RTCPeerConnection, WebSocket: Socket = globalThis.WebSocket, now = () => Date.now() }) {
    super();
    Object.assign(this, { channel, uid, device, token, localStream, iceTransportPolicy, extraIceServers, PeerConnection, Socket, now });
    this.url = rtcURL(url, channel);
    this.redirects = 0;
    /** @type {Map<string, PeerLink>} keyed by `uid|device` */
    this.links = new Map();
    this.iceServers = [];
    this.firstFrames = new Set();
    this.published = new Set();
    this.closed = false;
  }

  /**
   * Joins; resolves once joined, rejects with the server's `joinFailed`. A cluster's node where the channel's
   * members do not meet answers `channelElsewhere` with the address of the node where they do: the join follows it
   * (twice at most). Once joined, a channel connection that is lost, or whose server stops, is joined again while
   * the peer links stay up (media flows peer to peer): 250 ms doubling to 2 s, for 20 s, as the Swift engine does.
   */
  join() {
    return new Promise((resolve, reject) => this.#open({
      joined: (frame) => {
        this.joinedOnce = true;
        resolve(frame);
      },
      refused: (frame) => reject(Object.assign(new Error(frame.message), { code: frame.code })),
      lost: () => {
        reject(new Error('the channel closed before the join was answered'));
        if (!this.closed) this.#closeAll();
      },
    }));
  }

  /** Opens a socket and joins on it; `on` hears how the join ended, and the socket's frames go to `#frame`. */
  #open(on) {
    const socket = new this.Socket(this.url);
    this.socket = socket;
    let answered = false;
    let gone = false;
    socket.onopen = () => socket.send(JSON.stringify({
      type: 'join', channel: this.channel, uid: this.uid, token: this.token, device: this.device,
    }));
    socket.onmessage = (event) => {
      if (gone) return;
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!answered && frame.type === 'joinFailed' && frame.code === CHANNEL_ELSEWHERE && frame.location
        && this.redirects < MAX_REDIRECTS) {
        gone = true;
        this.redirects += 1;
        this.url = rtcURL(frame.location, this.channel);
        try {
          socket.close(1000);
        } catch {}
        return this.#open(on);
      }
      if (!answered && frame.type === 'joined') {
        answered = true;
        on.joined(frame);
      } else if (!answered && frame.type === 'joinFailed') {
        answered = true;
        gone = true;
        return on.refused(frame);
      } else if (frame.type === 'removed' && frame.code === SERVER_SHUTDOWN && this.joinedOnce) {
        gone = true;
        return this.#connectionLost();
      }
      this.#frame(frame);
    };
    socket.onclose = () => {
      if (gone || this.closed) return;
      gone = true;
      if (answered && this.joinedOnce) return this.#connectionLost();
      on.lost();
    };
  }

  /** The joined channel's connection went: keep the links and join again, or give up after `REJOIN.limitMillis`. */
  #connectionLost() {
    if (this.closed) return;
    this.outage ??= { since: this.now(), attempts: 0 };
    const pause = Math.min(REJOIN.maxPauseMillis, REJOIN.firstPauseMillis * 2 ** this.outage.attempts);
    this.outage.attempts += 1;
    clearTimeout(this.rejoinTimer);
    this.rejoinTimer = setTimeout(() => {
      if (this.closed) return;
      if (this.now() - this.outage.since >= REJOIN.limitMillis) {
        this.#emit('removed', { code: CONNECTION_LOST, message: `channel ${this.channel} could not be joined again` });
        return this.#closeAll();
      }
      this.redirects = 0;
      this.#open({
        joined: () => {
          this.outage = null;
        },
        refused: (frame) => {
          if (REJOINABLE.includes(frame.code)) return this.#connectionLost();
          this.#emit('removed', { code: frame.code, message: frame.message });
          this.#closeAll();
        },
        lost: () => this.#connectionLost(),
      });
    }, pause);
  }

  /** Leaves the channel and closes every peer connection. */
  leave() {
    if (this.closed) return;
    try {
      if (this.socket?.readyState === 1) this.socket.send(JSON.stringify({ type: 'leave' }));
    } catch {}
    this.#closeAll();
  }

  #closeAll() {
    this.closed = true;
    clearInterval(this.statsTimer);
    clearTimeout(this.rejoinTimer);
    for (const link of this.links.values()) link.close();
    this.links.clear();
    try {
      this.socket?.close(1000);
    } catch {}
  }

  #frame(frame) {
    switch (frame.type) {
      case 'joined': {
        const members = frame.devices ?? (frame.members ?? []).map((uid) => ({ uid }));
        if (this.statsTimer === undefined) {
          this.iceServers = [...this.extraIceServers, ...(frame.iceServers ?? [])];
          this.#emit('localJoined', { iceServers: this.iceServers });
          this.statsTimer = setInterval(() => this.#pollStats(), ROOM_TIMING.statsPollMillis);
        }
        // After a rejoin, the links that stayed up go on; members new since get theirs.
        for (const member of members) this.#add(member);
        return;
      }
      case 'joinFailed':
        return this.#emit('joinFailed', { code: frame.code, message: frame.message });
      case 'memberJoined':
        return this.#add({ uid: frame.uid, device: frame.device });
      case 'memberLeft': {
        const key = keyOf(frame);
        const link = this.links.get(key);
        if (!link) return;
        link.close();
        this.links.delete(key);
        if (![...this.links.values()].some((other) => other.uid === frame.uid)) {
          this.firstFrames.forEach((mark) => mark.startsWith(`${frame.uid}|`) && this.firstFrames.delete(mark));
          this.#emit('remoteLeft', { uid: frame.uid, reason: frame.reason });
        }
        return;
      }
      case 'signal': {
        const link = this.links.get(keyOf({ uid: frame.from, device: frame.device }));
        let data;
        try {
          data = JSON.parse(frame.data);
        } catch {
          return this.#emit('warning', { message: `a signal from ${frame.from} is not JSON` });
        }
        if (link) link.received(data);
        return;
      }
      case 'signalFailed':
        return this.#emit('warning', { message: `signal to ${frame.to} failed: ${frame.message}` });
      case 'removed':
        this.#emit('removed', { code: frame.code, message: frame.message });
        return this.#closeAll();
      case 'error':
        return this.#emit('warning', { message: `channel error ${frame.code}: ${frame.message}` });
    }
  }

  /** Links to `member` unless it is this user (another device of ours) or already linked. */
  #add(member) {
    const key = keyOf(member);
    if (member.uid === this.uid || this.links.has(key) || this.closed) return;
    if (![...this.links.values()].some((link) => link.uid === member.uid)) this.#emit('remoteJoined', { uid: member.uid });
    const link = new PeerLink(this, member, 1);
    this.links.set(key, link);
    link.start();
  }

  /** A member asked for a fresh link (its media path broke): replace ours and negotiate again. */
  restart(link, generation) {
    if (generation <= link.generation) return;
    link.close();
    const fresh = new PeerLink(this, { uid: link.uid, device: link.device }, generation);
    this.links.set(keyOf(link), fresh);
    fresh.start();
  }

  sendSignal(member, data) {
    if (this.closed || this.socket?.readyState !== 1) return;
    this.socket.send(JSON.stringify({ type: 'signal', to: member.uid, device: member.device, data: JSON.stringify(data) }));
  }

  async #pollStats() {
    const at = this.now();
    for (const link of this.links.values()) {
      let report;
      try {
        report = await link.pc.getStats();
      } catch {
        continue;
      }
      const stats = [...report.values()];
      for (const kind of ['video', 'audio']) {
        const inbound = stats.find((s) => s.type === 'inbound-rtp' && s.kind === kind);
        const arrived = kind === 'video' ? inbound?.framesDecoded > 0 : inbound?.totalSamplesReceived > 0;
        const mark = `${link.uid}|${kind}`;
        if (arrived && !this.firstFrames.has(mark)) {
          this.firstFrames.add(mark);
          this.#emit('firstFrame', { uid: link.uid, kind });
        }
        const outbound = stats.find((s) => s.type === 'outbound-rtp' && s.kind === kind);
        if (outbound?.packetsSent > 0 && !this.published.has(kind)) {
          this.published.add(kind);
          this.#emit('localPublished', { kind });
        }
      }
      const quality = link.quality.sample(stats, at);
      if (quality) this.#emit('quality', { uid: link.uid, quality });
    }
  }

  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}

function keyOf({ uid, device }) {
  return `${uid}|${device ?? ''}`;
}

/** One peer connection to one member, and its offer/answer exchange. */
class PeerLink {
  constructor(room, { uid, device }, generation) {
    Object.assign(this, { room, uid, device, generation });
    this.offerer = room.uid < uid;
    this.remoteApplied = false;
    this.pendingCandidates = [];
    this.quality = new QualitySampler();
    this.pc = new room.PeerConnection({ iceServers: room.iceServers, iceTransportPolicy: room.iceTransportPolicy });
    // The offerer makes one video and one audio transceiver, video first, as our engine offers them (nothing to
    // renegotiate later); the answerer sends on the transceivers the offer makes (#sendOnOffered).
    if (this.offerer) {
      for (const kind of ['video', 'audio']) {
        const track = this.#localTrack(kind);
        if (track) this.pc.addTransceiver(track, { direction: 'sendrecv', streams: [room.localStream] });
        else this.pc.addTransceiver(kind, { direction: 'recvonly' });
      }
    }
    this.remoteStream = new MediaStream();
    this.pc.ontrack = (event) => {
      this.remoteStream.addTrack(event.track);
      room.dispatchEvent(new CustomEvent('remoteStream', { detail: { uid, stream: this.remoteStream } }));
    };
    this.pc.onicecandidate = (event) => {
      if (!event.candidate || !event.candidate.candidate) return;
      room.sendSignal(this, { type: 'ice', mline: event.candidate.sdpMLineIndex ?? 0, candidate: event.candidate.candidate });
    };
  }

  async start() {
    if (!this.offerer) return;
    try {
      const offer = await this.pc.createOffer();
      await this.pc.setLocalDescription(offer);
      this.room.sendSignal(this, { type: 'offer', sdp: this.pc.localDescription.sdp });
    } catch (error) {
      this.#failed(error);
    }
  }

  async received(signal) {
    try {
      switch (signal.type) {
        case 'offer':
          if (this.offerer || this.remoteApplied) return;
          await this.pc.setRemoteDescription({ type: 'offer', sdp: signal.sdp });
          await this.#sendOnOffered();
          await this.#remoteApplied();
          await this.pc.setLocalDescription(await this.pc.createAnswer());
          this.room.sendSignal(this, { type: 'answer', sdp: this.pc.localDescription.sdp });
          return;
        case 'answer':
          if (!this.offerer || this.remoteApplied) return;
          await this.pc.setRemoteDescription({ type: 'answer', sdp: signal.sdp });
          return this.#remoteApplied();
        case 'ice':
          if (typeof signal.candidate !== 'string' || !signal.candidate) return;
          if (!this.remoteApplied) return this.pendingCandidates.push(signal);
          return this.pc.addIceCandidate({ candidate: signal.candidate, sdpMLineIndex: signal.mline });
        case 'restart':
          return this.room.restart(this, signal.generation);
        default:
          return; // subscription (`media`) and `publishing`: this client always sends and receives both kinds
      }
    } catch (error) {
      this.#failed(error);
    }
  }

  #localTrack(kind) {
    return this.room.localStream?.getTracks().find((track) => track.kind === kind) ?? null;
  }

  /** A remote offer made a transceiver per media line: send this side's track of each kind on it. */
  async #sendOnOffered() {
    for (const transceiver of this.pc.getTransceivers()) {
      const track = this.#localTrack(transceiver.receiver.track.kind);
      if (!track) continue;
      await transceiver.sender.replaceTrack(track);
      transceiver.sender.setStreams?.(this.room.localStream);
      transceiver.direction = 'sendrecv';
    }
  }

  async #remoteApplied() {
    this.remoteApplied = true;
    for (const signal of this.pendingCandidates.splice(0)) {
      await this.pc.addIceCandidate({ candidate: signal.candidate, sdpMLineIndex: signal.mline });
    }
  }

  #failed(error) {
    this.room.dispatchEvent(new CustomEvent('warning', { detail: { message: `negotiation with ${this.uid} failed: ${error.message ?? error}` } }));
  }

  close() {
    this.pc.ontrack = null;
    this.pc.onicecandidate = null;
    this.pc.close();
  }
}

/**
 * Quality of what arrives from one peer, per period (the report's sample, docs/timeline.md): loss, jitter, round
 * trip, bitrates, and freezes (video: the browser's freeze time; audio: concealed time) from `getStats` deltas.
 */
export class QualitySampler {
  #last = null;

  /** A sample when a period has passed since the last one (`stats`: the report's values), else `null`. */
  sample(stats, at) {
    const inbound = (kind) => stats.find((s) => s.type === 'inbound-rtp' && s.kind === kind) ?? {};
    const audio = inbound('audio');
    const video = inbound('video');
    const pair = stats.find((s) => s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded') ?? {};
    const now = {
      at,
      audio: { lost: audio.packetsLost ?? 0, received: audio.packetsReceived ?? 0, bytes: audio.bytesReceived ?? 0,
        concealed: (audio.concealedSamples ?? 0) - (audio.silentConcealedSamples ?? 0) },
      video: { lost: video.packetsLost ?? 0, received: video.packetsReceived ?? 0, bytes: video.bytesReceived ?? 0,
        freezes: video.totalFreezesDuration ?? 0 },
      jitter: audio.jitter,
      roundTrip: pair.currentRoundTripTime,
    };
    const last = this.#last;
    if (last && at - last.at < ROOM_TIMING.qualityIntervalMillis) return null;
    this.#last = now;
    if (!last) return null;
    const period = at - last.at;
    const loss = (kind) => {
      const lost = now[kind].lost - last[kind].lost;
      const received = now[kind].received - last[kind].received;
      return lost + received > 0 ? round((Math.max(0, lost) * 100) / (Math.max(0, lost) + received)) : undefined;
    };
    const kbps = (kind) => round(Math.max(0, now[kind].bytes - last[kind].bytes) * 8 / period);
    return {
      periodMillis: period,
      audioLossPercent: loss('audio'),
      videoLossPercent: loss('video'),
      jitterMillis: now.jitter === undefined ? undefined : round(now.jitter * 1000),
      roundTripMillis: now.roundTrip === undefined ? undefined : round(now.roundTrip * 1000),
      audioKbps: kbps('audio'),
      videoKbps: kbps('video'),
      audioFreezeMillis: Math.round(Math.max(0, now.audio.concealed - last.audio.concealed) / 48),
      videoFreezeMillis: Math.round(Math.max(0, now.video.freezes - last.video.freezes) * 1000),
    };
  }
}

function round(value) {
  return Math.round(value * 100) / 100;
}
