// "Download my data" in Account: GET /api/export saved as the file the service names
// (mandate-export-<date>.json). Fetched rather than followed as a link, so a refusal (once a minute,
// a session that ended) is said in words on the card instead of becoming a downloaded error file.
import { run } from '../actions.ts';
import { ApiError, describe } from '../api.ts';
import { byId, el } from '../dom.ts';

const FILENAME = /filename="([^"]+)"/;

async function download(): Promise<string> {
  let res: Response;
  try {
    res = await fetch('/api/export', { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json' } });
  } catch {
    throw new ApiError('No connection to the service. Check your network and try again.', 0, '');
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { detail?: unknown; retry_after?: unknown } | null;
    const { message, detail } = describe(res.status, body, res.headers.get('retry-after'));
    const said = res.status === 429 ? `You downloaded your data a moment ago. ${message}` : message;
    throw new ApiError(said, res.status, detail);
  }
  const name = FILENAME.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'mandate-export.json';
  const url = URL.createObjectURL(await res.blob());
  try {
    const link = el('a', { href: url });
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // The click has handed the file to the browser's download; the address is no longer needed.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
  return name;
}

export function setUpDataExport(): void {
  const button = byId('export-button', HTMLButtonElement);
  const done = byId('export-done', HTMLElement);
  button.addEventListener('click', () => {
    done.hidden = true;
    void run(button, 'Preparing your file…', async () => {
      const name = await download();
      done.textContent = `Saved as ${name} in your downloads.`;
      done.hidden = false;
    }, { errorNode: byId('export-error', HTMLElement) });
  });
}
