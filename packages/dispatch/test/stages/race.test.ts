// The cancellation helpers on their own.
import { describe, expect, it } from 'vitest';
import { LazyCancellation } from '../../src/cancellation.js';
import { z } from 'zod';
import { createDispatcher, defineTool, raceCancellation, sleep } from '../../src/index.js';
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

describe('a LazyCancellation given as the dispatch context`s cancellation', () => {
  it('is told from a look-alike by its private fields', () => {
    const real = new LazyCancellation();
    const lookAlike = Object.create(LazyCancellation.prototype) as LazyCancellation;
    const plain = { aborted: false, reason: undefined, onAbort: () => () => {} };
    expect(LazyCancellation.is(real)).toBe(true);
    for (const other of [lookAlike, plain, null, undefined, 'cancel', real.onAbort])
      expect(LazyCancellation.is(other)).toBe(false);
  });

  it('cancels a running tool when aborted, as a mirrored one would, and a look-alike still gets an error result', async () => {
    const hang = defineTool({
      name: 'hang',
      description: 'Waits until cancelled.',
      input: z.object({}),
      readOnly: true,
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))),
    });
    const dispatcher = createDispatcher({ tools: [hang] });
    const cancellation = new LazyCancellation();
    const pending = dispatcher.dispatch([{ id: 'h1', name: 'hang', input: {} }], { turnId: 't', cancellation });
    await new Promise((resolve) => setImmediate(resolve));
    cancellation.abort('user left');
    const { results } = await pending;
    expect(results).toMatchObject([{ callId: 'h1', isError: true, errorKind: 'cancelled' }]);
    const lookAlike = Object.create(LazyCancellation.prototype) as LazyCancellation;
    const other = await dispatcher.dispatch([{ id: 'h2', name: 'hang', input: {} }], { turnId: 't', cancellation: lookAlike });
    expect(other.results).toMatchObject([{ callId: 'h2', isError: true, errorKind: 'internal' }]);
  });
});
