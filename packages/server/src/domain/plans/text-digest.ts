/**
 * The server uses the one text normalisation and digest that agents use (decisions §20); it lives in
 * @mandate/protocol so the SDK computes identical digests. Tests: packages/protocol/test/text-digest.test.ts.
 */
export { normalizeText, sameDigestSet, textDigest, textDigestSet } from '@mandate/protocol';
