export declare const DOWNLOADS_DIR: string;
export declare const DOWNLOADS: Readonly<Record<'agent' | 'site', string>>;
export declare function downloadsStale(root?: string): boolean;
export declare function buildDownloads(root?: string): Record<'agent' | 'site', { file: string; name: string; version: string }>;
