import { createHmac, timingSafeEqual } from 'node:crypto';

// X-Campaignd-Signature: t=UNIX_SECONDS,v1=HEX(HMAC-SHA256(secret, "t.body"))
// (docs/design.md §9). The time is signed with the body so that a captured delivery cannot be
// replayed later than the receiver's tolerance.

export const SIGNATURE_HEADER = 'x-campaignd-signature';

/** The header value for `body` sent at `unixSeconds`. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** Whether `header` signs `body` with `secret` (what a receiver does; used by the tests). */
export function verifySignature(secret: string, body: string, header: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${parts.t}.${body}`).digest('hex'));
  const given = Buffer.from(parts.v1);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
