// A name for this browser in the owner's device list ("Chrome on Android"), from the user agent.
// Only a label people recognise: nothing depends on it, and it is never used to tell devices apart.

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(A|iOS)?\//, 'Edge'],
  [/\b(OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(Firefox|FxiOS)\//, 'Firefox'],
  [/\b(HeadlessChrome|Chrome|Chromium|CriOS)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

const SYSTEMS: [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\b(iPhone|iPod)\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'Mac'],
  [/\bLinux\b/, 'Linux'],
];

const first = (ua: string, table: [RegExp, string][]): string | undefined => table.find(([re]) => re.test(ua))?.[1];

export function deviceName(userAgent: string): string {
  const browser = first(userAgent, BROWSERS) ?? 'Browser';
  const system = first(userAgent, SYSTEMS);
  return system ? `${browser} on ${system}` : browser;
}
