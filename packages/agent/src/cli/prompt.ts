import { UsageError } from './exit-codes.ts';

/**
 * Reads a secret from the terminal without echoing it. Only on a TTY: a script passes the owner's
 * password in MANDATE_PASSWORD instead (never as a flag, which would show in `ps` and shell history).
 */
export function promptHidden(question: string, stdin: NodeJS.ReadStream = process.stdin, stderr: NodeJS.WriteStream = process.stderr): Promise<string> {
  if (!stdin.isTTY) return Promise.reject(new UsageError('no terminal to ask for the password on: set MANDATE_PASSWORD'));
  stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(new UsageError('cancelled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
