// CIBA from your site's server: ask the owner of an agent that signed in before to confirm something on
// their phone, and get the tokens of a new sign-in once they approve with their passkey. `actSub` is
// the agent's `act.sub` from an ID token your site received; `bindingMessage` (at most 100
// characters) is shown to the owner as written, so show the same text on your side.
import * as client from 'openid-client';

export async function confirmWithOwner(config: client.Configuration, actSub: string, bindingMessage: string) {
  const request = await client.initiateBackchannelAuthentication(config, {
    scope: 'openid',
    login_hint: actSub,
    binding_message: bindingMessage,
  });
  // Polls every `interval` seconds (5), slower when told `slow_down`; rejects with `access_denied`
  // when the owner declines and `expired_token` when nobody answered in `expires_in` seconds.
  return client.pollBackchannelAuthenticationGrant(config, request);
}
