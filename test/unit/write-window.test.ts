import { describe, expect, it } from 'vitest';
import { Turns, WriteWindow } from '../../src/leads/write-window.js';

/** A promise settled by hand. */
function deferred(): { promise: Promise<void>; resolve(): void; reject(err: Error): void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('WriteWindow', () => {
  it('lets no more than its limit run, and makes room as each ends', async () => {
    const window = new WriteWindow(2);
    const a = deferred();
    const b = deferred();
    window.add(a.promise);
    window.add(b.promise);
    let roomed = false;
    const room = window.room().then(() => (roomed = true));
    await Promise.resolve();
    expect(roomed).toBe(false);
    b.resolve();
    await room;
    expect(roomed).toBe(true);
    a.resolve();
    await window.drain();
  });

  it('reports a failed write at the next room() and drain(), never as an unhandled rejection', async () => {
    const window = new WriteWindow(1);
    const a = deferred();
    window.add(a.promise);
    a.reject(new Error('batch 1 failed'));
    await expect(window.room()).rejects.toThrow('batch 1 failed');
    await expect(window.drain()).rejects.toThrow('batch 1 failed');
  });

  it('settled() waits for every write, whatever became of them', async () => {
    const window = new WriteWindow(3);
    const a = deferred();
    const b = deferred();
    window.add(a.promise);
    window.add(b.promise);
    const order: string[] = [];
    const settled = window.settled().then(() => order.push('settled'));
    a.reject(new Error('x'));
    order.push('a');
    b.resolve();
    await settled;
    expect(order).toEqual(['a', 'settled']);
  });
});

describe('Turns', () => {
  it('opens each turn when every turn before it is done, in the order they were handed out', async () => {
    const turns = new Turns();
    const first = turns.next();
    const second = turns.next();
    const third = turns.next();
    const seen: number[] = [];
    const waiting = [third.previous.then(() => seen.push(3)), second.previous.then(() => seen.push(2)), first.previous.then(() => seen.push(1))];
    await first.previous;
    expect(seen).toEqual([1]);
    // The second ends early (a batch that failed before taking ids): the third still waits for the first.
    second.done();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(seen).toEqual([1]);
    first.done();
    first.done();
    await Promise.all(waiting);
    expect(seen).toEqual([1, 2, 3]);
  });
});
