export declare const BUILD_CONFIGS: readonly string[];
export declare const PACKAGES: readonly string[];
export declare function staleBuilds(root?: string): string[];
export declare function ensureBuilt(): boolean;
