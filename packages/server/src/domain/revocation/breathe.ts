/** Lets the event loop run whatever waits (requests, timers) before the next step of a long build. */
export const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
