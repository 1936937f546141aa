/**
 * @mandate/site: verify agent requests at your site, in cloud mode (Mandate checks each request) or
 * local mode (checked here; Mandate only uses up step-ups). Express: `@mandate/site/express`;
 * Fastify: `@mandate/site/fastify`; node:http and anything else: this module.
 */
export { createVerifier } from './verifier.ts';
export type { Verifier, VerifierStatus } from './verifier.ts';
export type { VerifierOptions, FetchLike, RevocationMode } from './config.ts';
export type { HeaderSource, MandateRequest, RouteRequirements, Verified, Refused, VerifyResult, MandateErrorCode, SdkErrorCode, Mode } from './types.ts';
export { SDK_ERROR_CODES } from './types.ts';
export { REPORT_KINDS } from './report.ts';
export type { ReportKind, ReportResult, ReportAccepted, ReportRefused } from './report.ts';
export { MemoryReplayCache } from './local/replay-memory.ts';
export type { MemoryReplayCacheOptions } from './local/replay-memory.ts';
export type { ConsumeResult, ReplayCache, ReplayCacheOption, ReplayProof } from './local/replay-cache.ts';
export { LEGACY_STEPUP_HEADER, STEPUP_HEADER, accessTokenOf } from './request.ts';
export { fromNodeRequest, refusalBody, requireAgent, sendRefusal } from './node.ts';
export type { NodeRouteOptions, WithMandate } from './node.ts';
export type { RouteOptions } from './route-options.ts';
export { BOUND_BODY_MAX_BYTES } from './node-body.ts';
/** For `verify(request, {action, detailsDigest})` without the middleware: the digest of a request's parsed JSON body. */
export { detailsDigestOf } from '@mandate/protocol';
export { VERIFY_ERROR_CODES } from '@mandate/protocol';
export type { VerifyErrorCode } from '@mandate/protocol';
/** Receipts (decisions §29): proof, checked offline with the service's JWKS, that the owner's passkey approved exactly one action with those details. */
export { RECEIPT_ERROR_CODES, ReceiptError, verifyReceipt } from '@mandate/protocol';
export type { CredentialKey, Receipt, ReceiptErrorCode, ReceiptExpectation, ServiceKeys, VerifiedReceipt, VerifyReceiptOptions } from '@mandate/protocol';
/** MCP servers protected by Mandate (decisions §28): `mcpAuth`; Express and Fastify adapters in their entry points. */
export { mcpAuth, sendMcpAnswer } from './mcp/mcp-auth.ts';
export type { McpAuth, McpNodeRequest } from './mcp/mcp-auth.ts';
export type { McpAuthOptions, McpToolRule } from './mcp/options.ts';
export type { McpAnswer, McpAuthExtra, McpAuthInfo, McpAuthResult } from './mcp/guard.ts';
export type { ProtectedResourceMetadata } from './mcp/metadata.ts';
export type { ApprovalExtra, ProgressNotification, ToolErrorResult } from './mcp/approval.ts';
export { CALL_AGAIN, defaultSummary } from './mcp/approval.ts';
