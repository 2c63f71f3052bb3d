// The server's clock against this one, NTP-style (docs/protocol.md, "Clocks"): each round trip that carries the
// server's time gives offset = serverTime - midpoint, within ± half the round trip; of the last eight samples the
// one with the smallest round trip is kept. A pure value: samples in, estimate out.

export const CLOCK_SAMPLES = 8;

export class ClockOffsetEstimator {
  #samples = [];

  /** A round trip sent at `sentAt` and answered at `receivedAt` (this clock) with the server's `serverTime`. */
  add({ sentAt, receivedAt, serverTime }) {
    if (![sentAt, receivedAt, serverTime].every(Number.isFinite) || receivedAt < sentAt) return;
    const roundTrip = receivedAt - sentAt;
    this.#samples.push({ offset: serverTime - (sentAt + roundTrip / 2), roundTrip });
    if (this.#samples.length > CLOCK_SAMPLES) this.#samples.shift();
  }

  /** `{offsetMillis, errorMillis, samples}` (the report's `clock`), or `null` before the first sample. */
  get estimate() {
    if (this.#samples.length === 0) return null;
    const best = this.#samples.reduce((a, b) => (b.roundTrip < a.roundTrip ? b : a));
    return {
      offsetMillis: Math.round(best.offset),
      errorMillis: Math.ceil(best.roundTrip / 2),
      samples: this.#samples.length,
    };
  }
}
