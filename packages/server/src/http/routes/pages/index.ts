import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services.ts';

interface Asset {
  body: string;
  type: string;
  cache: string;
}

const here = (file: string): string => readFileSync(new URL(file, import.meta.url), 'utf8');

/**
 * The SimpleWebAuthn browser bundle (UMD, exposes `SimpleWebAuthnBrowser`). The package exports
 * only its entry point, so the bundle is found next to it rather than by a subpath import.
 */
function webauthnBrowserBundle(): string {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  } catch {
    throw new Error('@simplewebauthn/browser is not installed; the owner page (/app) needs its browser bundle');
  }
  return readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

/**
 * The owner page: plain HTML, CSS and one script, read once at start. No inline script or style,
 * so the strict CSP (`script-src 'self'`) of the security-headers hook applies unchanged.
 */
export async function pageRoutes(app: FastifyInstance, _s: Services): Promise<void> {
  // Pages must be fresh after a deploy; assets are small, so a short cache is enough.
  const assets: Record<string, Asset> = {
    '/app': { body: here('./app.html'), type: 'text/html; charset=utf-8', cache: 'no-cache' },
    '/assets/app.js': { body: here('./app.js'), type: 'text/javascript; charset=utf-8', cache: 'public, max-age=300' },
    '/assets/app.css': { body: here('./app.css'), type: 'text/css; charset=utf-8', cache: 'public, max-age=300' },
    '/assets/simplewebauthn-browser.js': { body: webauthnBrowserBundle(), type: 'text/javascript; charset=utf-8', cache: 'public, max-age=3600' },
  };

  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/app'));

  for (const [path, asset] of Object.entries(assets)) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) => {
      reply.header('content-type', asset.type).header('cache-control', asset.cache);
      return asset.body;
    });
  }
}
