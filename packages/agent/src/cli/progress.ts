import type { WaitProgress } from '../approvals/wait.ts';

/** 271_000 ms -> "4:31". */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, '0')}`;
}

/** One human line for a poll: what we wait for and how long is left. */
export function progressLine(p: WaitProgress, what: string): string {
  if (p.status === 'unreachable') return `Cannot reach the service; still trying… ${formatRemaining(p.remainingMs)} left`;
  // A step-up's poll answer names its action: show the owner's exact wording, whoever chose it.
  const subject = p.answer?.kind === 'stepup' && p.answer.action ? `"${p.answer.action}"` : what;
  if (p.status === 'pending') return `Waiting for the owner to approve ${subject} on their phone… ${formatRemaining(p.remainingMs)} left`;
  return `The owner's answer: ${p.status}`;
}

/**
 * Shows waiting progress on stderr. On a terminal one line is rewritten in place every poll; in a
 * log (not a TTY) a line is written when the status changes and otherwise every 30 s, so logs stay
 * short but show the agent is alive.
 */
export class ProgressReporter {
  private lastWrite = 0;
  private inPlace = false;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  readonly report = (p: WaitProgress): void => {
    const line = progressLine(p, this.what);
    if (this.stream.isTTY) {
      this.stream.write(`\r\x1b[K${line}`);
      this.inPlace = true;
      return;
    }
    if (p.changed || this.now() - this.lastWrite >= 30_000) {
      this.stream.write(`${line}\n`);
      this.lastWrite = this.now();
    }
  };

  /** Ends an in-place line so that what follows starts on a fresh line. */
  done(): void {
    if (this.inPlace) this.stream.write('\n');
    this.inPlace = false;
  }
}
