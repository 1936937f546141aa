/**
 * Files the owner app and the public pages read at start (styles, icons, legal texts, and the app's
 * browser TypeScript that esbuild bundles) live in this package's `src/`; the build (dist/) holds
 * JavaScript only. Both src/ and dist/ sit one level below the package, so `../src/` names the same
 * folder whichever of the two is running.
 */
const SOURCE_DIR = new URL('../src/', import.meta.url);

/** A file or folder (ending in `/`) of this package's `src/`, by its path inside `src/`. */
export const sourceFile = (path: string): URL => new URL(path, SOURCE_DIR);
