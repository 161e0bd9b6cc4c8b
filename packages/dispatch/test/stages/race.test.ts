// The cancellation helpers on their own.
import { describe, expect, it } from 'vitest';
import { LazyCancellation } from '../../src/cancellation.js';
import { raceCancellation, sleep } from '../../src/index.js';
import { CANCELLED, raceUserCode } from '../../src/race.js';

describe('raceCancellation', () => {
  it('settles with the work, or with onAbort when cancelled first', async () => {
    const cancel = new LazyCancellation();
    expect(await raceCancellation(Promise.resolve(1), cancel, () => 'cancelled')).toBe(1);
    const pending = raceCancellation(new Promise<number>(() => {}), cancel, () => 'cancelled');
    cancel.abort('stop');
    expect(await pending).toBe('cancelled');
  });

  it('handles the rejection of work that lost the race (already cancelled: no unhandled rejection)', async () => {
    const cancel = new LazyCancellation();
    cancel.abort('stop');
    expect(await raceCancellation(Promise.reject(new Error('late')), cancel, () => null)).toBeNull();
    await expect(raceCancellation(Promise.reject(new Error('first')), new LazyCancellation(), () => null)).rejects.toThrow(
      'first',
    );
  });
});

describe('sleep', () => {
  it('resolves true after the time, false when cancelled first or already', async () => {
    const cancel = new LazyCancellation();
    expect(await sleep(0, cancel)).toBe(true);
    const pending = sleep(60_000, cancel);
    cancel.abort('stop');
    expect(await pending).toBe(false);
    expect(await sleep(0, cancel)).toBe(false);
  });
});

describe('raceUserCode', () => {
  it('does not run the code when already cancelled, and turns a synchronous throw into a rejection', async () => {
    let ran = false;
    const cancelled = new LazyCancellation();
    cancelled.abort('stop');
    expect(await raceUserCode(() => (ran = true), cancelled)).toBe(CANCELLED);
    expect(ran).toBe(false);
    await expect(
      raceUserCode(() => {
        throw new Error('sync');
      }, new LazyCancellation()),
    ).rejects.toThrow('sync');
  });
});
