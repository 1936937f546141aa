export declare const NODE22: string;
export declare function node22Version(): string | undefined;
export declare function installNode22(): string;
