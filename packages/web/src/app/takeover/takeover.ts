// The take-over page (/app/takeover/{sid}, decisions §21): shows the agent's browser as JPEG frames
// relayed over the owner's WebSocket and sends the owner's taps (scaled to the frame's own size),
// text, keys and scrolls back. The socket carries the session cookie; the server checks Origin.

type Closing = 'done' | 'cancelled' | 'expired' | 'agent_left';
const CLOSINGS: Record<Closing, string> = {
  done: 'The agent has taken over again. You can close this page.',
  cancelled: 'Take-over cancelled.',
  expired: 'Time is up: the take-over ended after 10 minutes.',
  agent_left: 'The agent left the take-over.',
};

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** The frame coordinates of a tap on the image shown at `shown` size. */
export function scaleTap(offsetX: number, offsetY: number, shown: { width: number; height: number }, frame: { w: number; h: number }): { x: number; y: number } {
  const clamp = (v: number, max: number) => Math.min(Math.max(Math.round(v), 0), max);
  return { x: clamp((offsetX / shown.width) * frame.w, frame.w - 1), y: clamp((offsetY / shown.height) * frame.h, frame.h - 1) };
}

function start(): void {
  const sid = location.pathname.split('/').pop() ?? '';
  const status = $<HTMLParagraphElement>('tk-status');
  const img = $<HTMLImageElement>('tk-frame');
  const waiting = $<HTMLParagraphElement>('tk-waiting');
  const text = $<HTMLInputElement>('tk-text');
  let frame = { w: 0, h: 0 };
  let ended = false;

  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/takeover/${encodeURIComponent(sid)}/owner`);
  const send = (m: object): void => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(m));
  };
  const end = (why: string): void => {
    ended = true;
    status.textContent = why;
    for (const b of document.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input')) b.disabled = true;
  };

  socket.addEventListener('open', () => {
    status.textContent = 'Connected: you are in control';
  });
  socket.addEventListener('message', (e) => {
    let m: { t?: string; data?: string; w?: number; h?: number; url?: string; field?: string };
    try {
      m = JSON.parse(String(e.data)) as typeof m;
    } catch {
      return;
    }
    if (m.t === 'frame' && typeof m.data === 'string') {
      frame = { w: m.w ?? 0, h: m.h ?? 0 };
      img.src = `data:image/jpeg;base64,${m.data}`;
      img.hidden = false;
      waiting.hidden = true;
    } else if (m.t === 'url' && typeof m.url === 'string') {
      $('tk-url').textContent = m.url;
    } else if (m.t === 'focus' && typeof m.field === 'string') {
      const f = $('tk-focus');
      f.textContent = `The agent's cursor is in: ${m.field}`;
      f.hidden = false;
    } else if (m.t && m.t in CLOSINGS) {
      end(CLOSINGS[m.t as Closing]);
    }
  });
  socket.addEventListener('close', (e) => {
    if (!ended) end(e.code === 1006 ? 'Could not connect: the take-over may have ended, or you are signed out.' : `Disconnected${e.reason ? `: ${e.reason}` : ''}.`);
  });

  img.addEventListener('click', (e) => {
    if (!frame.w || !frame.h) return;
    const at = scaleTap(e.offsetX, e.offsetY, { width: img.clientWidth, height: img.clientHeight }, frame);
    send({ t: 'click', ...at });
  });
  $<HTMLFormElement>('tk-form').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ t: 'set', value: text.value.slice(0, 1000) });
  });
  document.querySelector<HTMLButtonElement>('[data-send="text"]')?.addEventListener('click', () => {
    send({ t: 'text', text: text.value.slice(0, 500) });
  });
  for (const b of document.querySelectorAll<HTMLButtonElement>('[data-key]')) b.addEventListener('click', () => send({ t: 'key', key: b.dataset.key }));
  for (const b of document.querySelectorAll<HTMLButtonElement>('[data-scroll]')) b.addEventListener('click', () => send({ t: 'scroll', dy: Number(b.dataset.scroll) }));
  $<HTMLButtonElement>('tk-cancel').addEventListener('click', () => {
    void fetch(`/api/takeover/${encodeURIComponent(sid)}/cancel`, { method: 'POST', credentials: 'same-origin' }).then((r) => {
      if (!r.ok && !ended) status.textContent = 'Could not cancel; try again.';
    });
  });
  // The protocol has no "done" from the owner: the agent hands back itself; the owner just leaves.
  $<HTMLButtonElement>('tk-done').addEventListener('click', () => {
    socket.close(1000, 'owner done');
    location.href = '/app';
  });
}

if (typeof document !== 'undefined') start();
