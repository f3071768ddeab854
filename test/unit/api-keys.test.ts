// The API key's format, hash and check (src/api/keys.ts), without a store: `cdk_` and the
// base64url of 32 bytes from the randomness source, a 12-character prefix, the SHA-256
// the store keeps, and a check that compares hashes with crypto.timingSafeEqual.
import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { apiKeyMatches, apiKeyNameProblem, apiKeyPrefix, hashApiKey, isApiKeyFormat, newApiKey } from '../../src/api/keys.js';

afterEach(() => vi.restoreAllMocks());

/** A randomness source that gives `fill` repeated, and records the sizes asked for. */
function fixedRandom(fill: number): { random: (n: number) => Buffer; asked: number[] } {
  const asked: number[] = [];
  return { random: (n) => (asked.push(n), Buffer.alloc(n, fill)), asked };
}

describe('a new key', () => {
  it('is cdk_ and the base64url of 32 bytes from the randomness source', () => {
    const { random, asked } = fixedRandom(0xfb);
    const made = newApiKey(random);
    expect(asked).toEqual([32]);
    expect(made.key).toBe(`cdk_${Buffer.alloc(32, 0xfb).toString('base64url')}`);
    expect(made.key).toMatch(/^cdk_[A-Za-z0-9_-]{43}$/);
    // 0xfb bytes give "-" and "_" in base64url: the format accepts them.
    expect(made.key).toContain('-');
    expect(isApiKeyFormat(made.key)).toBe(true);
  });

  it('comes with its 12-character prefix and the hex SHA-256 of the whole key, never the key itself', () => {
    const made = newApiKey();
    expect(made.prefix).toBe(made.key.slice(0, 12));
    expect(made.prefix.startsWith('cdk_')).toBe(true);
    expect(made.hash).toBe(crypto.createHash('sha256').update(made.key).digest('hex'));
    expect(made.hash).toBe(hashApiKey(made.key));
    expect(made.hash).not.toContain(made.key.slice(4, 12));
    expect(apiKeyPrefix(made.key)).toBe(made.prefix);
  });

  it('differs each time from the real source', () => {
    const keys = new Set(Array.from({ length: 50 }, () => newApiKey().key));
    expect(keys.size).toBe(50);
  });

  it('refuses a source that gives the wrong number of bytes, rather than a short key', () => {
    expect(() => newApiKey(() => Buffer.alloc(16))).toThrow('an API key needs 32 random bytes, the source gave 16');
  });
});

describe('the format check', () => {
  it.each([
    ['', false],
    ['cdk_', false],
    [`cdk_${'A'.repeat(42)}`, false],
    [`cdk_${'A'.repeat(44)}`, false],
    [`CDK_${'A'.repeat(43)}`, false],
    [`cdk_${'A'.repeat(42)}=`, false],
    [`cdk_${'A'.repeat(42)}+`, false],
    [`cdk_${'A'.repeat(43)}\n`, false],
    [`cdk_${'A'.repeat(43)}`, true],
  ])('%j → %s', (text, ok) => {
    expect(isApiKeyFormat(text)).toBe(ok);
  });
});

describe('the check against a stored hash', () => {
  it('accepts the key and nothing else, comparing 32-byte digests with crypto.timingSafeEqual', () => {
    const made = newApiKey();
    const spy = vi.spyOn(crypto, 'timingSafeEqual');
    expect(apiKeyMatches(made.key, made.hash)).toBe(true);
    expect(apiKeyMatches(`${made.key.slice(0, -1)}${made.key.endsWith('A') ? 'B' : 'A'}`, made.hash)).toBe(false);
    expect(apiKeyMatches(newApiKey().key, made.hash)).toBe(false);
    expect(spy).toHaveBeenCalledTimes(3);
    for (const [a, b] of spy.mock.calls) {
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
  });

  it('is false for a stored hash that is not a SHA-256 (no throw from unequal lengths)', () => {
    const made = newApiKey();
    expect(apiKeyMatches(made.key, '')).toBe(false);
    expect(apiKeyMatches(made.key, made.hash.slice(2))).toBe(false);
    expect(apiKeyMatches(made.key, 'not hex at all')).toBe(false);
  });
});

describe('key names', () => {
  it.each(['crm', 'web-form_2', 'a', 'Zapier.prod', 'x'.repeat(64)])('accepts %j', (name) => {
    expect(apiKeyNameProblem(name)).toBeNull();
  });

  it.each(['', '-crm', 'with space', 'semi;colon', 'x'.repeat(65), 'ünï', 'a\nb'])('refuses %j with the rule', (name) => {
    expect(apiKeyNameProblem(name)).toMatch(/is not a key name: use 1 to 64 letters, digits, "\.", "_" or "-", starting with a letter or digit$/);
  });
});
