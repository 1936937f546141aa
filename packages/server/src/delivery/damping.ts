/**
 * Damping of devices that keep failing (issue 22): a push endpoint that times out (5 s through the
 * outbound guard) or errs again and again costs a send slot each time and helps nobody. After
 * DAMP_AFTER_FAILURES failed sends in a row, the device's messages wait (`push_devices.damped_until`),
 * for twice as long each further failure, up to DAMP_MAX_MS; the next try after the wait is the probe.
 * A delivered push ends the damping. The device is never removed for it: only its push service
 * saying it is gone (404, 410) removes it (decisions §13).
 */
export const DAMP_AFTER_FAILURES = 3;
export const DAMP_FIRST_MS = 60_000;
export const DAMP_MAX_MS = 3600_000;

/** How long a device with `failures` failed sends in a row waits; 0 while under the threshold. */
export function dampMs(failures: number): number {
  if (failures < DAMP_AFTER_FAILURES) return 0;
  return Math.min(DAMP_MAX_MS, DAMP_FIRST_MS * 2 ** Math.min(20, failures - DAMP_AFTER_FAILURES));
}
