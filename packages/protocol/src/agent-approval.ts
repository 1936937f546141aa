/**
 * What an agent approval describes (decisions §19): what the agent read on the page, shown on the
 * owner's card and read by the category and the approval modes. Every field is optional. One
 * definition for the service, the agent SDK and the owner app.
 */
export interface AgentApprovalDetails {
  /** The button or link text (the service cuts it to 80 characters). */
  label?: string;
  /** An amount shown on the page (40). */
  amount?: string;
  /** What the action is about (120). */
  item?: string;
  /** The page title (200). */
  page?: string;
  /** The host of the page the agent is on. */
  host?: string;
  /** The host a form posts to. */
  target_host?: string;
  /** `/` and printable ASCII, at most 300 characters. */
  path?: string;
  /** The form has card fields: money. */
  card_fields?: boolean;
  /** The form has password fields: security. */
  password_fields?: boolean;
  /** At most 8 SHA-256 digests (64 lower-case hex) of the texts to be sent, from `textDigest`. */
  text_digests?: string[];
  /**
   * With `digest`: what the owner approves, shown on the card as written (decisions §29; 1 to 500
   * printable characters, lines kept). Not cut: a summary that breaks the rules is refused.
   */
  summary?: string;
  /** With `summary`: base64url SHA-256 of the JCS form of the details (`detailsDigestOf`); the passkey challenge commits to it. */
  digest?: string;
}
