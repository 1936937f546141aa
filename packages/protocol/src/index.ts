/** @mandate/protocol: the protocol rules shared by the server, the SDKs and local verifiers. */
export { LIMITS, SCOPE_PATTERN, isValidAction, isValidScopeList } from './limits.ts';
export { VERIFY_ERROR_CODES, ProtocolError, isVerifyErrorCode } from './errors.ts';
export type { VerifyErrorCode } from './errors.ts';
export { normalizeHtu, htuMatches } from './htu.ts';
export { normalizeText, textDigest, textDigestSet, sameDigestSet } from './text-digest.ts';
export { parsePublicP256Jwk, jwkThumbprint, JwkError } from './jwk.ts';
export type { EcP256PublicJwk } from './jwk.ts';
export { PASS_TYP, STEPUP_TYP, REVOCATION_TYP, DPOP_TYP } from './claims.ts';
export type {
  PassClaims,
  ResourcePassClaims,
  StepupClaims,
  RevocationClaims,
  RevokedAgent,
  RevokedGrant,
  AgentJwtClaims,
  DpopClaims,
  Confirmation,
} from './claims.ts';
export { keyResolverFromJwks, MAX_KID_LENGTH } from './keys.ts';
export type { KeyResolver, ServiceKeys, VerificationKey } from './keys.ts';
export { accessTokenHash, verifyDpopSignature, verifyDpopProof, verifyDpopProofWhile } from './dpop.ts';
export type { DpopExpectation, VerifiedDpopProof, VerifiedDpopSignature } from './dpop.ts';
export { verifyServiceToken } from './service-token.ts';
export type { ServiceTokenOptions } from './service-token.ts';
export { verifyPass, verifyPassAndProof } from './verify-pass.ts';
export { verifyResourcePass, verifyResourceRequest } from './resource-pass.ts';
export type { ResourceTokenScheme, VerifiedResourceRequest, VerifyResourcePassOptions, VerifyResourceRequestInput } from './resource-pass.ts';
export { VerifiedPassCache } from './verified-pass-cache.ts';
export type { VerifiedPassCacheOptions } from './verified-pass-cache.ts';
export type { VerifyPassOptions, VerifyPassAndProofInput, VerifiedRequest } from './verify-pass.ts';
export { verifyStepupToken } from './stepup.ts';
export type { VerifyStepupOptions } from './stepup.ts';
export { verifyRevocationSnapshot, revocationVerdict } from './revocation.ts';
export { RevocationIndex } from './revocation-index.ts';
export { REVOCATION_DELTA_TYP, applyRevocationDelta, parseRevocationDeltaClaims, verifyRevocationDelta } from './revocation-delta.ts';
export type { RevocationDeltaClaims, RevocationEntries, VerifyRevocationDeltaOptions } from './revocation-delta.ts';
export type { VerifyRevocationOptions } from './revocation.ts';
export { verifyAgentJwt } from './agent-jwt.ts';
export type { VerifyAgentJwtOptions } from './agent-jwt.ts';
export { createDpopProof, createAgentJwt, generateAgentKeyPair } from './sign.ts';
export type { DpopProofInput, AgentJwtInput, PrivateKey } from './sign.ts';
export { signServiceToken, signPass, signResourcePass, signRevocationDelta, signStepupToken, signRevocationSnapshot, signReceiptKeyAttestation } from './service-sign.ts';
export type { SignatureCheck, SignatureChecker } from './es256.ts';
export type { PushPayload, PushType } from './push.ts';
export type { AgentApprovalDetails } from './agent-approval.ts';
export {
  WBA_REQUEST_TAG,
  WBA_DIRECTORY_TAG,
  WBA_DIRECTORY_MEDIA_TYPE,
  WBA_DIRECTORY_PATH,
  WBA_DIRECTORY_MAX_LIFETIME_SEC,
  parseEd25519PublicJwk,
  ed25519Thumbprint,
  directoryBody,
  contentDigest,
  contentDigestMatches,
  HttpSignatureError,
  readSignatures,
  componentId,
  signatureBase,
  verifyEd25519,
  fieldComponentValue,
  readSignatureAgent,
  signDirectory,
  signRequest,
  authorityOf,
} from './web-bot-auth.ts';
export type { Ed25519PublicJwk, CoveredComponent, SignatureParams, HttpSignature, WbaSigningKey, DirectorySignatureInput, RequestSignatureInput } from './web-bot-auth.ts';
export { DETAILS_SUMMARY_MAX_LENGTH, approvalChallenge, canonicalJson, detailsDigestOf, detailsProblem, isDetailsDigest, isDetailsSummary } from './approval-details.ts';
export type { ApprovalChallengeInput, ApprovalDetails } from './approval-details.ts';
export { RECEIPT_KEY_TYP, parseReceipt } from './receipt.ts';
export type { CredentialKey, Receipt, ReceiptKeyClaims, ReceiptWebauthn } from './receipt.ts';
export { RECEIPT_ERROR_CODES, ReceiptError, verifyReceipt } from './verify-receipt.ts';
export type { ReceiptErrorCode, ReceiptExpectation, VerifiedReceipt, VerifyReceiptOptions } from './verify-receipt.ts';
