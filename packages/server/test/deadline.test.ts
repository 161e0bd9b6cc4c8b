// A parked call whose approval expires shows its deadline on the turn page, escaped like any value.
import { describe, expect, it } from 'vitest';
import { parkedCall } from '../src/console/turn-page.js';

describe('the console shows when a parked call must be decided', () => {
  const call = { id: 'd1', name: 'deploy', input: { service: 'api' } };

  it('a call with expiresAt: "Decide by" with the time in UTC and a machine-readable datetime', () => {
    const page = String(
      parkedCall({ call, input: call.input, expiresAfterMs: 60_000, expiresAt: Date.UTC(2026, 10, 27, 9, 30) }),
    );
    expect(page).toContain('Decide by <time datetime="2026-11-27T09:30:00.000Z">2026-11-27 09:30:00 UTC</time>');
    expect(page).toContain('rejected as expired');
  });

  it('a call without a deadline shows none', () => {
    expect(String(parkedCall({ call, input: call.input }))).not.toContain('Decide by');
  });
});
