/** @mandate/agent: the agent SDK. The `mandate-agent` CLI (src/cli) is built on it. */
export { MandateAgent } from './agent.ts';
export { streamTakeover } from './takeover.ts';
export type { TakeoverCommand, TakeoverEnd, TakeoverFrame, TakeoverStream, TakeoverStreamOptions, HeaderWebSocket, HeaderWebSocketClass } from './takeover.ts';
export type { MandateAgentOptions, AccessRequest, SiteFetchOptions, PlanInput, PlanView, AgentApprovalDetails } from './agent.ts';
export { textDigest, normalizeText } from '@mandate/protocol';
export type { WaitOptions, WaitProgress } from './approvals/wait.ts';
export {
  MandateError,
  AgentRevokedError,
  AccessRequiredError,
  ServiceUnreachableError,
  ApprovalError,
  InvalidInputError,
  PasswordManagerOffError,
  KeyFileError,
  StateLockedError,
} from './client/errors.ts';
export type { MandateErrorCode, ApprovalOutcome } from './client/errors.ts';
export { ServiceClient, normalizeServiceUrl } from './client/http.ts';
export type { FetchLike } from './client/http.ts';
export { registerAgentAsOwner } from './client/owner.ts';
export type { RegisteredAgent } from './client/owner.ts';
export type { AgentStatus, CreatedRequest, PollAnswer, RequestStatus, TokenAnswer } from './client/types.ts';
export { systemClock } from './clock.ts';
export type { Clock } from './clock.ts';
export { AgentKey } from './keys/agent-key.ts';
export { WbaKey, loadWbaKeyFile, saveWbaKeyFile, wbaKeyFilePath } from './keys/wba-key.ts';
export type { WbaKeyFile } from './keys/wba-key.ts';
export { WebBotAuth, WBA_REQUEST_LIFETIME_SEC, WBA_PROOF_RENEW_MARGIN_SEC } from './wba.ts';
export type { WbaSetup } from './wba.ts';
export type { PrivateJwk } from './keys/agent-key.ts';
export { defaultAgentDir, loadKeyFile, saveKeyFile, keyFilePath, isAgentId } from './keys/key-file.ts';
export type { KeyFileContents } from './keys/key-file.ts';
export type { PasswordManager, SecretSummary } from './password-manager.ts';
export { oidcAuthorizeHeaders, OIDC_AGENT_HEADER_LIFETIME_SEC } from './oidc-sign-in.ts';
export type { Pass } from './passes/pass-keeper.ts';
export { needsRefresh, refreshDueAt, REFRESH_MARGIN_MS } from './passes/refresh-policy.ts';
export type { SiteRequestInit, ReplayableBody } from './site-call.ts';
export { normalizeSiteId, siteIdOfUrl } from './site-id.ts';
export { FileStateStore } from './state/file-state-store.ts';
export { MemoryStateStore } from './state/memory-state-store.ts';
export type { SiteState, StateStore } from './state/state-store.ts';
