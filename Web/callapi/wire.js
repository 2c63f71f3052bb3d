// Wire format 1.0 (docs/spec/wire-format.md) and our extension of it (docs/reliability.md, docs/multi-device.md):
// the values, spelled once, and the reading and writing of one call message.

/** Call states (CallAPI's raw values). */
export const CallState = Object.freeze({ idle: 0, prepared: 1, calling: 2, connecting: 3, connected: 4, failed: 10 });

/** Why a state changed (CallAPI's raw values; 40-42 are ours). */
export const StateReason = Object.freeze({
  none: 0, joinRTCFailed: 1, messageFailed: 4, localRejected: 5, remoteRejected: 6, remoteAccepted: 7,
  localAccepted: 8, localHangup: 9, remoteHangup: 10, localCancelled: 11, remoteCancelled: 12,
  recvRemoteFirstFrame: 13, callingTimeout: 14, cancelByCallerRecall: 15, remoteCallBusy: 17,
  remoteCallingTimeout: 18, localVideoCall: 30, localAudioCall: 31, remoteVideoCall: 32, remoteAudioCall: 33,
  peerLost: 40, answeredElsewhere: 41, rejectedElsewhere: 42,
});

/** Call events (CallAPI's raw values; 150-154 are ours). */
export const CallEvent = Object.freeze({
  none: 0, deinitialize: 1, callingTimeout: 3, remoteCallingTimeout: 4, joinRTCSuccessed: 5, stateMismatch: 9,
  joinRTCStart: 10, remoteUserRecvCall: 99, localRejected: 100, remoteRejected: 101, remoteAccepted: 103,
  localAccepted: 104, localHangup: 105, remoteHangup: 106, remoteJoined: 107, remoteLeft: 108,
  localCancelled: 109, remoteCancelled: 110, localJoined: 111, localLeft: 112, recvRemoteFirstFrame: 113,
  remoteCallBusy: 117, captureFirstLocalVideoFrame: 119, publishFirstLocalVideoFrame: 120,
  publishFirstLocalAudioFrame: 130, localVideoCall: 140, localAudioCall: 141, remoteVideoCall: 142,
  remoteAudioCall: 143, peerLost: 150, answeredElsewhere: 151, rejectedElsewhere: 152,
});

/** `message_action` values; 20 and 21 are our extension's acknowledgement and keep-alive. */
export const Action = Object.freeze({
  videoCall: 0, audioCall: 10, cancel: 1, accept: 2, reject: 3, hangup: 4, ack: 20, keepAlive: 21,
});

export const MESSAGE_VERSION = '1.0';
/** The busy reject's reason: apps match on this exact text. */
export const BUSY_REASON = 'The user is currently busy';
/** Cost-map stages, in the order a call passes them. */
export const CostStage = Object.freeze([
  'remoteUserRecvCall', 'acceptCall', 'localUserJoinChannel', 'localFirstFrameDidCapture',
  'localFirstFrameDidPublish', 'remoteUserJoinChannel', 'recvFirstFrame',
]);

const MAX_DEVICE_ID = 64;
const USER_ID = /^(0|[1-9][0-9]{0,15})$/;

/** A user id as the wire writes it (a positive integer); `null` when it is not one. */
export function parseUserId(value) {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  if (typeof value === 'string' && USER_ID.test(value)) {
    const number = Number(value);
    return Number.isSafeInteger(number) && number > 0 ? number : null;
  }
  return null;
}

/**
 * Reads one received body. Returns `{ message }` or `{ problem }` (why it is dropped): not JSON, another version,
 * an unknown action, a field of the wrong type.
 */
export function readMessage(body) {
  let object;
  try {
    object = JSON.parse(body);
  } catch {
    return { problem: 'not JSON' };
  }
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return { problem: 'not an object' };
  if (object.message_version !== MESSAGE_VERSION) return { problem: `version ${JSON.stringify(object.message_version)}` };
  const action = object.message_action;
  if (!Object.values(Action).includes(action)) return { problem: `unknown action ${JSON.stringify(action)}` };
  if (typeof object.callId !== 'string' || object.callId.length === 0 || object.callId.length > 128) {
    return { problem: 'no callId' };
  }
  const integer = (key) => (object[key] === undefined ? undefined : Number.isSafeInteger(object[key]) ? object[key] : NaN);
  const text = (key) => (object[key] === undefined ? undefined : typeof object[key] === 'string' ? object[key] : NaN);
  const message = {
    action,
    callId: object.callId,
    timestamp: integer('message_timestamp'),
    messageId: integer('messageId'),
    fromUserId: parseUserId(object.fromUserId),
    reliable: object.reliability === 1,
    deviceId: text('deviceId'),
    remoteUserId: object.remoteUserId === undefined ? undefined : parseUserId(object.remoteUserId),
    roomId: text('fromRoomId'),
    cancelByInternal: object.cancelCallByInternal === 1,
    rejectByInternal: object.rejectByInternal === 1,
    rejectReason: text('rejectReason'),
    hangupReason: text('hangupReason'),
    answeredByDevice: text('answeredByDevice'),
    rejectedByDevice: text('rejectedByDevice'),
    ackMessageId: integer('ackMessageId'),
    inCall: object.inCall === undefined ? undefined : object.inCall === 1,
    extension: object.fromUserExtension && typeof object.fromUserExtension === 'object' ? object.fromUserExtension : undefined,
    fields: object,
  };
  for (const [key, value] of Object.entries(message)) {
    if (Number.isNaN(value)) return { problem: `${key} has the wrong type` };
  }
  if (message.deviceId !== undefined && (message.deviceId.length === 0 || message.deviceId.length > MAX_DEVICE_ID)) {
    return { problem: 'deviceId is empty or too long' };
  }
  if (message.remoteUserId === null) return { problem: 'remoteUserId is not a user id' };
  if ((action === Action.videoCall || action === Action.audioCall) && (!message.roomId || !message.remoteUserId)) {
    return { problem: 'a call without fromRoomId or remoteUserId' };
  }
  return { message };
}

/**
 * Writes one message: the envelope (version, timestamp, sender, call, our mark and device) and the action's own keys.
 * `fields` holds the action's keys in wire spelling; `undefined` values are left out.
 */
export function writeMessage({ action, callId, fromUserId, timestamp, messageId, deviceId, reliable, extension, fields = {} }) {
  const object = {
    message_action: action,
    message_version: MESSAGE_VERSION,
    message_timestamp: timestamp,
    messageId,
    fromUserId,
    callId,
    fromUserExtension: extension,
    reliability: reliable ? 1 : undefined,
    deviceId,
    ...fields,
  };
  for (const key of Object.keys(object)) if (object[key] === undefined) delete object[key];
  return JSON.stringify(object);
}
