// The JavaScript client of callapi-server (docs/web.md): plain ES modules, no dependencies.
export { Action, BUSY_REASON, CallEvent, CallState, CostStage, StateReason, readMessage, writeMessage } from './wire.js';
export { CallMachine, LIVENESS } from './call-machine.js';
export { Delivery, RETRY } from './delivery.js';
export { ClockOffsetEstimator } from './clock-offset.js';
export { SignalConnection, SignalError } from './signal-connection.js';
export { RtcRoom, QualitySampler, CHANNEL_ELSEWHERE, rtcURL } from './rtc-room.js';
export { CallClient, pushMark, randomUUID } from './call-client.js';
