import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { categoryOf, categoryRank, CATEGORY_ORDER, type ApprovalCategory } from '../src/domain/modes/category.ts';

// The category of an agent approval (decisions §19), from the label (else the action) and the form's
// signals; approval modes rely on it, so more words never make a request less careful.

const LABELS: Array<[string, ApprovalCategory]> = [
  ['Pay later', 'money'],
  ['Pay-later', 'money'],
  ['PAY NOW!', 'money'],
  ['ＰＡＹ', 'money'],
  ['Buy now', 'money'],
  ['Place order', 'money'],
  ['Check out', 'money'],
  ['Checkout', 'money'],
  ['Subscribe to Pro', 'money'],
  ['Book this room', 'money'],
  ['Renew plan', 'money'],
  ['Cancel subscription', 'money'],
  ['Total: €12.50', 'money'],
  ['Update billing address', 'security'],
  ['Change password', 'security'],
  ['Change e-mail', 'security'],
  ['Enable 2FA', 'security'],
  ['Authorize app', 'security'],
  ['Sign in', 'security'],
  ['Create API token', 'security'],
  ['Approve', 'security'],
  ['Delete draft', 'delete'],
  ['Remove item', 'delete'],
  ['Close account', 'delete'],
  ['Supprimer / delete?', 'delete'],
  ['Post comment', 'publish'],
  ['Send', 'publish'],
  ['Submit', 'publish'],
  ['Share with team', 'publish'],
  ['Deploy to production', 'publish'],
  ['Publish', 'publish'],
  ['Save', 'low'],
  ['  save  ', 'low'],
  ['Save.', 'low'],
  ['Update', 'low'],
  ['Apply filters', 'low'],
  ['Sort', 'low'],
  ['Archive', 'low'],
  ['Next page', 'low'],
  ['Next  Page →', 'low'],
  ['Add to cart', 'low'],
  ['ADD TO CART', 'low'],
  ['Cancel', 'low'],
  ['Save xyz', 'unknown'],
  ['Payday tips blog', 'unknown'],
  ['Bookmark', 'low'],
  ['Facebook', 'unknown'],
  ['Posterize image', 'unknown'],
  ['Ελληνικά', 'unknown'],
  ['下一页', 'unknown'],
  ['', 'unknown'],
];

describe('approval category (domain/modes/category.ts)', () => {
  it('reads labels: money, security, delete, publish, low (whole label only), else unknown', () => {
    for (const [label, expected] of LABELS) {
      assert.equal(categoryOf({ action: 'click', label }), expected, JSON.stringify(label));
    }
  });

  it('uses the action when there is no label (or an empty one)', () => {
    assert.equal(categoryOf({ action: 'checkout' }), 'money');
    assert.equal(categoryOf({ action: 'delete_draft' }), 'delete');
    assert.equal(categoryOf({ action: 'form:submit' }), 'publish');
    assert.equal(categoryOf({ action: 'next-page' }), 'low');
    assert.equal(categoryOf({ action: 'click' }), 'unknown');
    assert.equal(categoryOf({ action: 'save', label: '   ' }), 'low');
    // A label, when present, is what is read.
    assert.equal(categoryOf({ action: 'pay', label: 'Next page' }), 'low');
  });

  it('form signals outrank words: card fields and an amount are money, password fields security', () => {
    assert.equal(categoryOf({ action: 'click', label: 'Save', card_fields: true }), 'money');
    assert.equal(categoryOf({ action: 'click', label: 'Next', amount: '12.00 EUR' }), 'money');
    assert.equal(categoryOf({ action: 'click', label: 'Next', amount: '  ' }), 'low');
    assert.equal(categoryOf({ action: 'click', label: 'Continue', password_fields: true }), 'security');
    assert.equal(categoryOf({ action: 'click', label: 'Change password', card_fields: true }), 'money');
    assert.equal(categoryOf({ action: 'click', label: 'Save', card_fields: false, password_fields: false }), 'low');
  });

  it('ranks money > security > delete > publish > unknown > low', () => {
    const ranks = CATEGORY_ORDER.map(categoryRank);
    assert.deepEqual([...ranks].sort((a, b) => b - a), ranks);
    assert.deepEqual(CATEGORY_ORDER, ['money', 'security', 'delete', 'publish', 'unknown', 'low']);
  });

  const anyLabel = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom(...LABELS.map(([l]) => l)),
    fc.array(fc.constantFrom('save', 'next', 'page', 'post', 'delete', 'draft', 'the', 'cart', 'add', 'to', '→', '!', 'Ω'), { maxLength: 5 }).map((w) => w.join(' ')),
  );
  const moneyWord = fc.constantFrom('pay', 'Buy', 'ORDER', 'checkout', 'subscribe', 'book', 'renew', 'check out', '€5');
  const securityWord = fc.constantFrom('password', 'Email', '2fa', 'token', 'authorize', 'access', 'approve', 'billing', 'address');
  const joined = fc.constantFrom(' ', ', ', ' - ', '\n', '/');

  it('property: adding a money word never lowers the category, and makes it money', () => {
    fc.assert(fc.property(anyLabel, moneyWord, joined, fc.boolean(), (label, word, sep, front) => {
      const before = categoryOf({ action: 'click', label });
      const after = categoryOf({ action: 'click', label: front ? `${word}${sep}${label}` : `${label}${sep}${word}` });
      assert.ok(categoryRank(after) >= categoryRank(before), `${label} + ${word}: ${before} → ${after}`);
      assert.equal(after, 'money');
    }), { numRuns: 500 });
  });

  it('property: adding a security word never lowers the category, and makes it at least security', () => {
    fc.assert(fc.property(anyLabel, securityWord, joined, fc.boolean(), (label, word, sep, front) => {
      const before = categoryOf({ action: 'click', label });
      const after = categoryOf({ action: 'click', label: front ? `${word}${sep}${label}` : `${label}${sep}${word}` });
      assert.ok(categoryRank(after) >= categoryRank(before), `${label} + ${word}: ${before} → ${after}`);
      assert.ok(categoryRank(after) >= categoryRank('security'));
    }), { numRuns: 500 });
  });

  it('property: total and pure over any string', () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }), (label) => {
      const c = categoryOf({ action: 'click', label });
      assert.ok(CATEGORY_ORDER.includes(c));
      assert.equal(categoryOf({ action: 'click', label }), c, 'pure');
    }), { numRuns: 300 });
  });
});
