// Each audit record as a sentence: title and one line of detail.
import { duration, listText } from '../format.ts';
import type { ActivityItem } from '../types.ts';

/** The actions the service records, for the filter (value, label). */
export const ACTION_FILTERS: readonly [string, string][] = [
  ['request.created', 'Access asked'],
  ['request.approved', 'Access approved'],
  ['request.denied', 'Access denied'],
  ['request.expired', 'Request expired unanswered'],
  ['pass.issued', 'Pass issued'],
  ['grant.revoked', 'Access revoked'],
  ['grant.user_info_narrowed', 'Sharing narrowed'],
  ['stepup.requested', 'Action to confirm asked'],
  ['stepup.approved', 'Action approved'],
  ['stepup.denied', 'Action denied'],
  ['stepup.delivered', 'Confirmation collected'],
  ['stepup.used', 'Confirmation used at a site'],
  ['agent_approval.requested', 'Agent asked before acting'],
  ['agent_approval.approved', 'Agent action approved'],
  ['agent_approval.denied', 'Agent action denied'],
  ['agent_approval.auto_approved', 'Agent action approved by a rule'],
  ['approval_mode.changed', 'Approval mode changed'],
  ['agent.created', 'Agent added'],
  ['agent.removed', 'Agent deleted'],
  ['agent.flagged', 'Agent revoked or unblocked'],
  ['agent.note', 'Note from an agent'],
  ['agent.status', 'Agent status'],
  ['agent.password_manager', 'Password manager turned on or off'],
  ['report.received', 'Report from a site'],
  ['passkey.first_added', 'First passkey added'],
  ['passkey.undone', 'Passkey undone by the mailed link'],
  ['email.verified', 'Email address verified'],
  ['email.changed', 'Email address changed'],
  ['email.claimed', 'Email address proven at sign-up'],
  ['email.taken_over', 'Email address taken by its holder'],
  ['password.reset_requested', 'Password link asked for'],
  ['password.reset', 'Password changed by a mailed link'],
  ['phone.code_sent', 'Phone code texted'],
  ['phone.verified', 'Phone verified'],
  ['phone.removed', 'Phone removed'],
  ['recovery.codes_generated', 'Recovery codes made'],
  ['recovery.started', 'Account recovery started'],
  ['recovery.completed', 'Account recovered'],
  ['recovery.failed', 'Account recovery: a wrong try'],
  ['recovery.attempts_exhausted', 'Account recovery blocked'],
  ['oauth.linked', 'Sign-in provider linked'],
  ['oauth.unlinked', 'Sign-in provider unlinked'],
  ['oauth.sign_in', 'Signed in with a provider'],
  ['oidc.sign_in', 'Agent signed in to a site'],
  ['takeover.requested', 'Take-over asked'],
  ['takeover.ended', 'Take-over ended'],
  ['takeover.reported', 'Take-over problem reported'],
  ['plan.submitted', 'Plan submitted'],
  ['plan.approved', 'Plan approved'],
  ['plan.denied', 'Plan denied'],
  ['plan.withdrawn', 'Plan withdrawn'],
  ['plan.step_used', 'Plan step went ahead'],
  ['plan.step_result', 'Plan step result'],
  ['operator.registered', 'Operator registered'],
  ['operator.verified', 'Operator domain verified'],
  ['operator.secret_rotated', 'Operator secret replaced'],
  ['operator.switched', 'Operator switched on or off'],
  ['operator.consented', 'Operator consent given'],
  ['operator.consent_denied', 'Operator consent declined'],
  ['operator.connected', 'Operator connected'],
  ['operator.connection_ended', 'Operator connection ended'],
  ['operator.connection_limit', 'Operator agent limit changed'],
  ['app.approved', 'App approved in the browser'],
  ['app.denied', 'App declined in the browser'],
];

const quoted = (v: unknown): string => (typeof v === 'string' ? `"${v}"` : '');
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const count = (v: unknown): number => (Array.isArray(v) ? v.length : typeof v === 'number' ? v : 0);
const agents = (n: number): string => `${n} agent${n === 1 ? '' : 's'}`;

/** Who removed an agent: the owner, its operator, or the end of its operator's connection. */
function agentRemoved(who: string, d: Record<string, unknown>): string {
  if (d.by === 'operator') return `${quoted(d.operator) || 'Its operator'} removed the agent ${who}`;
  if (d.reason === 'owner_disconnected') return `${who} was removed: you disconnected its operator`;
  if (d.reason === 'operator_ended') return `${who} was removed: its operator ended the connection`;
  if (d.reason === 'code_reused') return `${who} was removed: its operator's connection ended`;
  return `You deleted the agent ${who}`;
}

function connectionEnded(d: Record<string, unknown>): string {
  const name = quoted(d.name) || 'an operator';
  if (d.reason === 'owner_disconnected') return `You disconnected ${name}`;
  if (d.reason === 'operator_ended') return `${capitalFirst(name)} ended its connection`;
  if (d.reason === 'code_reused') return `The connection to ${name} ended: its one-time code was used twice, a sign it was copied`;
  return `The connection to ${name} ended`;
}

const capitalFirst = (t: string): string => t.charAt(0).toUpperCase() + t.slice(1);

const endedAgents = (v: unknown): string => (count(v) ? `${agents(count(v))} removed and signed out of every site` : '');

/** What a new agent limit did: agents suspended beyond it, or working again under it. */
function limitChanges(d: Record<string, unknown>): string {
  const parts = [count(d.suspended) ? `${agents(count(d.suspended))} suspended` : '', count(d.lifted) ? `${agents(count(d.lifted))} working again` : ''];
  return parts.filter(Boolean).join(', ');
}

function limitsText(v: unknown): string {
  if (!v || typeof v !== 'object') return '';
  const l = v as { expires_in?: unknown; max_uses?: unknown };
  return [
    typeof l.expires_in === 'number' ? `ends after ${duration(l.expires_in)}` : '',
    typeof l.max_uses === 'number' ? `${l.max_uses} passes` : '',
  ].filter(Boolean).join(', ');
}

/** An approval your passkey signed over exactly what was approved leaves a receipt (decisions §29). */
const receiptNote = (d: Record<string, unknown>): string => (d.receipt === true ? 'Receipt kept: proof that your passkey approved exactly this' : '');

export function activityText(a: ActivityItem): [title: string, extra: string] {
  const d = a.detail;
  const who = a.agent_name ?? (str(d.name) || a.agent_id || 'an agent');
  const at = a.site ? ` at ${a.site}` : '';
  switch (a.action) {
    case 'request.created': return [`${who} asked for access${at}`, `${listText(d.scopes)}; about you: ${listText(d.user_info)}`];
    case 'request.approved': {
      const lim = limitsText(d.limits);
      const via = d.via === 'identity_provider' && str(d.provider) ? ` with ${str(d.provider)}` : '';
      return [`You approved ${who}${at}${via}`, `${listText(d.scopes)}; about you: ${listText(d.user_info)}${lim ? `; ${lim}` : ''}`];
    }
    case 'oidc.sign_in': return [`${who} signed in${at}`, `with its pass, as you approved${Array.isArray(d.scopes) && d.scopes.length ? `: ${listText(d.scopes)}` : ''}`];
    case 'request.denied': return [`You denied ${who}${at}`, listText(d.scopes)];
    case 'request.expired': return d.kind === 'stepup'
      ? [`${who}'s request to confirm ${quoted(d.action)}${at} expired unanswered`, '']
      : [`${who}'s request for access${at} expired unanswered`, listText(d.scopes)];
    // A site step-up (decisions §28): the site asked, for the agent acting there.
    case 'stepup.requested': return d.filed_by === 'site'
      ? [`${a.site ?? 'A site'} asked you to confirm ${quoted(d.action)} for ${who}`, '']
      : [`${who} asked you to confirm ${quoted(d.action)}${at}`, ''];
    case 'stepup.approved': return [`You approved ${quoted(d.action)} for ${who}${at}`, receiptNote(d)];
    case 'stepup.denied': return [`You denied ${quoted(d.action)} for ${who}${at}`, ''];
    case 'stepup.delivered': return d.filed_by === 'site'
      ? [`${a.site ?? 'The site'} collected your confirmation of ${quoted(d.action)} for ${who}`, '']
      : [`${who} collected your confirmation of ${quoted(d.action)}`, a.site ?? ''];
    case 'stepup.used': return [`${a.site ?? 'A site'} accepted your confirmation for ${who}`, listText(d.actions)];
    case 'pass.issued': return [`${who} got a pass${at}`, typeof d.uses_left === 'number' ? `${d.uses_left} passes left` : ''];
    case 'grant.revoked': return [`You revoked ${who}'s access${at}`, ''];
    case 'grant.user_info_narrowed': return [`You narrowed what ${who} may see${at}`, `now: ${listText(d.to)}`];
    // An operator's agents (decisions §17) are added and removed by it, or removed with its connection.
    case 'agent.created': return str(d.operator) ? [`${quoted(d.operator)} added the agent ${who}`, 'an operator you connected'] : [`You added the agent ${who}`, ''];
    case 'agent.removed': return [agentRemoved(who, d), ''];
    case 'agent.flagged': return [d.flag === 'revoked' ? `You revoked ${who}` : `You marked ${who} as ${str(d.flag)}`, ''];
    case 'agent.note': return [`Note from ${who}${str(d.title) ? `: ${str(d.title)}` : ''}`, str(d.text)];
    case 'agent.status': return [`${who}${at}: ${str(d.status) || 'status'}`, ''];
    case 'report.received': return [`${a.site ?? 'A site'} reported ${who}: ${str(d.kind)}`, str(d.detail)];
    // The account's own events (decisions §25, issue 14): no agent, no site.
    case 'passkey.first_added': return [`Your first passkey${str(d.name) ? ` ${quoted(d.name)}` : ''} was added`,
      d.mailed === true ? 'an undo link was mailed to you' : d.mailed === false ? 'no mail: your email address was not verified yet' : ''];
    case 'passkey.undo_mailed': return ['The undo link for your first passkey was mailed', 'after you verified your email address'];
    case 'passkey.undone': return [d.removed === false ? 'The mailed undo link was used' : 'A passkey was removed with the mailed undo link', 'every session was signed out'];
    case 'email.verified': return [`You verified your email address${str(d.email) ? ` ${str(d.email)}` : ''}`, ''];
    case 'email.changed': return [`You changed your email address${str(d.to) ? ` to ${str(d.to)}` : ''}`, str(d.from) ? `from ${str(d.from)}; it needs verifying again` : 'it needs verifying again'];
    case 'email.claimed': return [`You proved your email address${str(d.email) ? ` ${str(d.email)}` : ''} and your account was created`, d.taken_from_unverified_account === true ? 'another account that never verified it lost it' : ''];
    case 'password.reset_requested': return ['A link to choose a new password was mailed to you', 'valid 1 hour; not you? ignore the mail: nothing changes without it'];
    case 'password.reset': return [`Your password was changed with the link mailed to${str(d.email) ? ` ${str(d.email)}` : ' you'}`, 'every device was signed out'];
    case 'email.taken_over': return [`Your email address${str(d.email) ? ` ${str(d.email)}` : ''} was taken by its holder`, 'you never verified it; they proved it is theirs. Set an address of your own under Account'];
    // Phone and recovery (decisions §14, issue 23): the number is masked by the service.
    case 'phone.code_sent': return [`A code was texted to ${str(d.phone) || 'your phone'}`, 'to verify the number'];
    case 'phone.verified': return [`You verified your phone ${str(d.phone)}`.trim(), 'it can recover your account and be shared with sites you approve'];
    case 'phone.removed': return [`You removed your phone ${str(d.phone)}`.trim(), 'it no longer recovers your account or is shared'];
    case 'recovery.codes_generated': return ['You made new recovery codes', 'the older ones no longer work'];
    case 'recovery.started': return [`Account recovery started: a code was texted to ${str(d.phone) || 'your phone'}`, 'not you? Your account is safe without a recovery code'];
    case 'recovery.completed': {
      const unlinked = Array.isArray(d.identity_providers_unlinked) ? d.identity_providers_unlinked.filter((p): p is string => typeof p === 'string') : [];
      const passkeys = typeof d.passkeys_removed === 'number' ? `, ${d.passkeys_removed} passkey${d.passkeys_removed === 1 ? '' : 's'} removed` : '';
      return ['Your account was recovered', `password changed, every other sign-in ended${passkeys}${unlinked.length ? `, ${unlinked.join(', ')} unlinked (link again under Account)` : ''}`];
    }
    case 'recovery.failed': return ['A recovery try failed', `${typeof d.attempts_left === 'number' ? `${d.attempts_left} tr${d.attempts_left === 1 ? 'y' : 'ies'} left for that recovery; ` : ''}not you? Your account is safe without a recovery code`];
    case 'recovery.attempts_exhausted': return ['Account recovery blocked after 5 wrong codes', 'that recovery no longer works'];
    // Identity providers (decisions §15): `provider` is the configured name.
    case 'oauth.linked': return [`You linked ${str(d.provider) || 'a sign-in provider'}`, str(d.email)];
    case 'oauth.unlinked': return [`You unlinked ${str(d.provider) || 'a sign-in provider'}`, ''];
    case 'oauth.sign_in': return [`You signed in with ${str(d.provider) || 'a sign-in provider'}`, ''];
    case 'takeover.requested': return [`${who} asked you to take over${at}`, str(d.reason)];
    case 'takeover.ended': return [`Take-over by ${who} ended: ${str(d.state).replace('_', ' ')}`, ''];
    case 'takeover.reported': return [`${who} could not be taken over${at}: ${str(d.kind).replaceAll('_', ' ')}`, ''];
    // Plans (decisions §20): `title` and step ids as the agent sent them.
    case 'plan.submitted': return [`${who} asks you to pre-approve the plan ${quoted(d.title)}`.replace(/ $/, ''), typeof d.steps === 'number' ? `${d.steps} step${d.steps === 1 ? '' : 's'}` : ''];
    case 'plan.approved': return [`You approved a plan of ${who}`, Array.isArray(d.steps) ? `pre-approved steps: ${listText(d.steps)}` : ''];
    case 'plan.denied': return [`You denied a plan of ${who}`, 'nothing of it is pre-approved'];
    case 'plan.withdrawn': return [`You withdrew a plan of ${who}`, 'none of its steps goes ahead without asking'];
    case 'plan.step_used': return [`${who} went ahead with a pre-approved plan step${at}`, str(d.step) ? `step ${str(d.step)}` : ''];
    case 'plan.step_result': return [`${who} reported a plan step${at}: ${str(d.result) || 'unknown'}`, str(d.step) ? `step ${str(d.step)}` : ''];
    case 'agent_approval.requested': return [`${who} asked before ${quoted(d.label ?? d.action)}${at}`, ''];
    case 'agent_approval.approved': return [`You approved ${quoted(d.label ?? d.action)} for ${who}${at}`, receiptNote(d)];
    case 'agent_approval.denied': return [`You denied ${quoted(d.label ?? d.action)} for ${who}${at}`, ''];
    case 'agent_approval.auto_approved': return [`${quoted(d.label ?? d.action)} approved for ${who} by a rule${at}`, typeof d.reason === 'string' ? d.reason : ''];
    case 'agent.password_manager': return [d.enabled === true ? `You turned the password manager on for ${who}` : `You turned the password manager off for ${who}`,
      d.enabled === true ? 'it may list, fill and save your passwords in its operator\'s browser' : 'it asks you to take over to sign in'];
    case 'approval_mode.changed': return [`Approval mode for ${who}: ${d.site === '*' ? 'default' : String(d.site ?? '')} ${d.mode === null ? 'removed' : String(d.mode ?? '')}`, ''];
    // Operators the owner registered (decisions §17): name and domain as registered.
    case 'operator.registered': return [`You registered the operator ${quoted(d.name)}`.replace(/ $/, ''), str(d.domain) ? `domain ${str(d.domain)}; publish its line, verify it, then an admin switches it on` : ''];
    case 'operator.verified': return [`Your operator's domain ${str(d.domain)} was verified`.replace('  ', ' '), 'an admin can now switch it on'];
    case 'operator.secret_rotated': return ['You replaced an operator\'s secret', 'the old one stopped working at once'];
    case 'operator.switched': return [d.enabled === true ? 'An admin switched your operator on' : 'An admin switched your operator off',
      typeof d.agents === 'number' && d.changed === true ? `${d.agents} agent${d.agents === 1 ? '' : 's'} ${d.enabled === true ? 'unblocked' : 'blocked'}` : ''];
    // Consent to an operator (decisions §17): who, and for an ending, why.
    case 'operator.consented': return [`You approved connecting ${quoted(d.name)}`.replace(/ $/, ''), str(d.domain) ? `operator domain ${str(d.domain)}` : ''];
    case 'operator.consent_denied': return [`You declined connecting ${quoted(d.name)}`.replace(/ $/, ''), str(d.domain) ? `operator domain ${str(d.domain)}` : ''];
    case 'operator.connected': return [`${quoted(d.name) || 'An operator'} is connected`, typeof d.max_agents === 'number' ? `up to ${d.max_agents} agents` : ''];
    case 'operator.connection_ended': return [connectionEnded(d), endedAgents(d.agents)];
    // An app approved or declined at the consent page of /oidc/authorize (decisions §28).
    case 'app.approved': return [`You approved ${quoted(d.client_name) || 'an app'}${str(d.resource) ? ` at ${str(d.resource)}` : at}`, listText(d.scopes)];
    case 'app.denied': return [`You declined an app${str(d.resource) ? ` at ${str(d.resource)}` : at}`, str(d.client_id)];
    case 'operator.connection_limit': return [`You set an operator's agent limit to ${typeof d.max_agents === 'number' ? d.max_agents : '?'}`, limitChanges(d)];
    default: return [`${a.action}${a.agent_id ? ` · ${who}` : ''}${at}`, ''];
  }
}
