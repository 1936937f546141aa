export declare const PLUGIN_DIR: string;
export declare const WORDPRESS_DIR: string;
export declare function pluginVersion(root?: string): string;
export declare function pluginFiles(root?: string): string[];
export declare function zipName(version: string): string;
export declare function wordpressStale(root?: string): boolean;
export declare function zip(entries: [string, Buffer][]): Buffer;
export declare function buildWordpress(root?: string): { file: string; version: string };
