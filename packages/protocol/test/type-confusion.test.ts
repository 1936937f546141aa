import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  PASS_TYP,
  ProtocolError,
  REVOCATION_TYP,
  STEPUP_TYP,
  verifyPass,
  verifyRevocationSnapshot,
  verifyStepupToken,
} from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, KID, NOW, SITE, mintPass, mintRevocation, mintStepup, newAgent, newService, passClaims, revocationClaims, signRaw, stepupClaims } from './helpers.ts';

/*
 * Every service-signed kind must verify only as itself. The payloads below carry the claims of
 * ALL kinds at once, so a refusal can only come from the two kind markers (header typ and the
 * `type` claim), which is exactly what is under test.
 */

let agent: Agent;
let svc: Service;
before(async () => {
  agent = await newAgent();
  svc = await newService();
});

type Kind = 'pass' | 'stepup' | 'revocation';
const TYP: Record<Kind, string> = { pass: PASS_TYP, stepup: STEPUP_TYP, revocation: REVOCATION_TYP };
const TYPE: Record<Kind, string> = { pass: 'access', stepup: 'stepup', revocation: 'revocation' };
const KINDS: Kind[] = ['pass', 'stepup', 'revocation'];

async function verifyAs(kind: Kind, token: string): Promise<unknown> {
  const common = { keys: svc.resolver, issuer: ISSUER, now: NOW };
  if (kind === 'pass') return verifyPass(token, { ...common, site: SITE });
  if (kind === 'stepup') return verifyStepupToken(token, common);
  return verifyRevocationSnapshot(token, common);
}

async function accepted(kind: Kind, token: string): Promise<boolean> {
  try {
    await verifyAs(kind, token);
    return true;
  } catch (e) {
    assert.ok(e instanceof ProtocolError, String(e));
    assert.ok(['invalid_token', 'stepup_invalid'].includes(e.code), e.code);
    return false;
  }
}

describe('token kinds never verify as one another', () => {
  it('each real token verifies as its own kind only (every type swap)', async () => {
    const tokens: Record<Kind, string> = {
      pass: await mintPass(svc, agent),
      stepup: await mintStepup(svc, agent),
      revocation: await mintRevocation(svc),
    };
    for (const made of KINDS) {
      for (const as of KINDS) {
        assert.equal(await accepted(as, tokens[made]), made === as, `${made} presented as ${as}`);
      }
    }
  });

  it('header typ and type claim must both match: all 3 x 3 combinations, plus none and lookalikes', async () => {
    const union = { ...revocationClaims(), ...stepupClaims(agent), ...passClaims(agent) };
    const typs = [...KINDS.map((k) => TYP[k]), undefined, 'JWT', 'AT+JWT', 'application/at+jwt', 'dpop+jwt'];
    const types = [...KINDS.map((k) => TYPE[k]), undefined, 'agent', 'Access'];
    for (const typ of typs) {
      for (const type of types) {
        const token = await signRaw({ alg: 'ES256', kid: KID, typ }, { ...union, type }, svc.privateKey);
        for (const as of KINDS) {
          const expected = typ === TYP[as] && type === TYPE[as];
          assert.equal(await accepted(as, token), expected, `typ=${String(typ)} type=${String(type)} as ${as}`);
        }
      }
    }
  });
});
