import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../src/domain/errors.ts';
import { type PlanIn, type PlanStepIn, checkPlanIn, preApprovable } from '../src/domain/plans/plan-input.ts';
import { categoryOf } from '../src/domain/plans/plan-categories.ts';
import { textDigest } from '../src/domain/plans/text-digest.ts';

const NOW = 1_800_000_000;
const step = (s: Partial<PlanStepIn> = {}): PlanStepIn => ({ url: 'https://shop.example/cart', button: 'Save', ...s });
const plan = (p: Partial<PlanIn> = {}): PlanIn => ({ title: 'Weekly shop', start_at: NOW + 60, end_at: NOW + 3600, steps: [step()], ...p });

function refused(input: PlanIn, pattern: RegExp): void {
  assert.throws(() => checkPlanIn(input, NOW), (e: unknown) => e instanceof AppError && e.status === 400 && pattern.test(e.detail));
}

describe('checkPlanIn', () => {
  it('accepts a plain plan; ids default to positions; uses default to 1; times in ms', () => {
    const d = checkPlanIn(plan({ steps: [step(), step({ id: 'b', after: ['1'], uses: 5, path: '/cart/*' })] }), NOW);
    assert.equal(d.startAt, (NOW + 60) * 1000);
    assert.deepEqual(d.steps.map((s) => [s.id, s.position, s.uses, s.host, s.path, s.after]), [
      ['1', 1, 1, 'shop.example', null, []],
      ['b', 2, 5, 'shop.example', '/cart/*', ['1']],
    ]);
  });

  it('window rules', () => {
    assert.ok(checkPlanIn(plan({ start_at: NOW - 60, end_at: NOW }), NOW));
    refused(plan({ start_at: NOW - 61, end_at: NOW + 100 }), /past/);
    assert.ok(checkPlanIn(plan({ start_at: NOW + 30 * 86400, end_at: NOW + 30 * 86400 + 60 }), NOW));
    refused(plan({ start_at: NOW + 30 * 86400 + 1, end_at: NOW + 30 * 86400 + 100 }), /30 days/);
    refused(plan({ start_at: NOW, end_at: NOW + 59 }), /60 s to 24 h/);
    refused(plan({ start_at: NOW, end_at: NOW + 86401 }), /60 s to 24 h/);
    assert.ok(checkPlanIn(plan({ start_at: NOW, end_at: NOW + 86400 }), NOW));
    refused(plan({ start_at: NOW + 0.5, end_at: NOW + 100 }), /whole Unix seconds/);
  });

  it('title rules', () => {
    refused(plan({ title: '' }), /title/);
    refused(plan({ title: '   ' }), /title/);
    refused(plan({ title: 'x'.repeat(81) }), /title/);
    refused(plan({ title: 'a\u202eb' }), /invisible/);
    assert.ok(checkPlanIn(plan({ title: 'x'.repeat(80) }), NOW));
  });

  it('step count, ids, after', () => {
    refused(plan({ steps: [] }), /1 to 20/);
    refused(plan({ steps: Array.from({ length: 21 }, () => step()) }), /1 to 20/);
    assert.equal(checkPlanIn(plan({ steps: Array.from({ length: 20 }, () => step()) }), NOW).steps.length, 20);
    refused(plan({ steps: [step({ id: 'A' })] }), /id must be/);
    refused(plan({ steps: [step({ id: 'x'.repeat(25) })] }), /id must be/);
    refused(plan({ steps: [step({ id: 'a' }), step({ id: 'a' })] }), /earlier step/);
    refused(plan({ steps: [step({ id: '2' }), step()] }), /earlier step/);
    refused(plan({ steps: [step({ after: ['1'] })] }), /not an earlier step/);
    refused(plan({ steps: [step(), step({ id: 'b', after: ['c'] }), step({ id: 'c' })] }), /not an earlier step/);
  });

  it('url rules', () => {
    refused(plan({ steps: [step({ url: 'http://shop.example/' })] }), /https/);
    refused(plan({ steps: [step({ url: 'not a url' })] }), /not a URL/);
    refused(plan({ steps: [step({ url: 'https://u:p@shop.example/' })] }), /user name/);
    refused(plan({ steps: [step({ url: 'https://[::1]/' })] }), /host/);
    assert.equal(checkPlanIn(plan({ steps: [step({ url: 'https://SHOP.example:8443/x' })] }), NOW).steps[0]!.host, 'shop.example:8443');
  });

  it('path rules', () => {
    refused(plan({ steps: [step({ path: 'cart' })] }), /path/);
    refused(plan({ steps: [step({ path: '/caf\u00e9' })] }), /printable ASCII/);
    refused(plan({ steps: [step({ path: '/a\nb' })] }), /printable ASCII/);
    refused(plan({ steps: [step({ path: `/${'a'.repeat(300)}` })] }), /300/);
    refused(plan({ steps: [step({ path: '/a*/b' })] }), /only at its end/);
    assert.ok(checkPlanIn(plan({ steps: [step({ path: `/${'a'.repeat(299)}` })] }), NOW));
  });

  it('button, texts, uses', () => {
    refused(plan({ steps: [step({ button: '' })] }), /button/);
    refused(plan({ steps: [step({ button: 'x'.repeat(81) })] }), /button/);
    refused(plan({ steps: [step({ button: 'Sa\u200bve' })] }), /invisible/);
    refused(plan({ steps: [step({ texts: ['a', 'b', 'c', 'd', 'e'] })] }), /at most 4/);
    refused(plan({ steps: [step({ texts: [''] })] }), /1 to 10000/);
    refused(plan({ steps: [step({ texts: ['x'.repeat(10_001)] })] }), /1 to 10000/);
    refused(plan({ steps: [step({ uses: 0 })] }), /uses/);
    refused(plan({ steps: [step({ uses: 6 })] }), /uses/);
    refused(plan({ steps: [step({ uses: 1.5 })] }), /uses/);
    const d = checkPlanIn(plan({ steps: [step({ texts: ['b', 'a\r\n', 'a'] })] }), NOW);
    assert.deepEqual(d.steps[0]!.textDigests, [textDigest('a'), textDigest('b')].sort());
  });

  it('publish buttons need texts; delete and unknown buttons need a path', () => {
    refused(plan({ steps: [step({ button: 'Post comment' })] }), /texts/);
    assert.ok(checkPlanIn(plan({ steps: [step({ button: 'Post comment', texts: ['hi'] })] }), NOW));
    refused(plan({ steps: [step({ button: 'Delete' })] }), /path/);
    refused(plan({ steps: [step({ button: 'Frobnicate' })] }), /path/);
    assert.ok(checkPlanIn(plan({ steps: [step({ button: 'Delete', path: '/items/4' }), step({ button: 'Frobnicate', path: '/x*' })] }), NOW));
  });
});

describe('plan step categories (stand-in until the approvals category function is merged)', () => {
  const table: [string, string][] = [
    ['Pay now', 'money'], ['Place order', 'money'], ['Checkout', 'money'], ['Change password', 'security'],
    ['Update email', 'security'], ['Delete', 'delete'], ['Remove item', 'delete'], ['Send', 'publish'],
    ['Post comment', 'publish'], ['Save', 'low'], ['Add to cart', 'low'], ['next page', 'low'], ['Frobnicate', 'unknown'],
  ];
  for (const [label, category] of table) it(`${label} → ${category}`, () => assert.equal(categoryOf(label), category));
  it('money and security are never pre-approvable', () => {
    assert.equal(preApprovable('money'), false);
    assert.equal(preApprovable('security'), false);
    assert.equal(preApprovable('low'), true);
    assert.equal(preApprovable('delete'), true);
  });
});
