import { Type } from '@sinclair/typebox';

/** PasswordManagerState of domain/agents/password-manager.ts, as the agent status and the owner's switch answer it. */
export const PasswordManagerOut = Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Literal('not_applicable')], {
  description: '`off`: the agent\'s browser runs on its operator\'s computers and its owner has not turned the password manager on (the agent SDK refuses `listSecrets`, `fillSecret` and `saveSecret`; use `requestTakeover`); `on`: the owner turned it on; `not_applicable`: no operator browser, nothing is restricted',
});
