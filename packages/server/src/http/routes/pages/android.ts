import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services.ts';
import { notFound } from '../../../domain/errors.ts';

/**
 * The Android app's two public files (decisions §13): Digital Asset Links, so the app may open this
 * service's links and use its passkeys, and the app package itself. Like every page, they stay out
 * of the OpenAPI description (documented in docs/operations/push.md).
 */
export async function androidRoutes(app: FastifyInstance, s: Services): Promise<void> {
  const { packageName, certSha256, apkPath } = s.config.android;
  const links = packageName && certSha256.length
    ? [{
        relation: ['delegate_permission/common.handle_all_urls', 'delegate_permission/common.get_login_creds'],
        target: { namespace: 'android_app', package_name: packageName, sha256_cert_fingerprints: certSha256 },
      }]
    : [];

  app.get('/.well-known/assetlinks.json', {
    schema: { hide: true },
  }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=3600');
    return reply.type('application/json').send(JSON.stringify(links));
  });

  app.get('/download/android', {
    schema: { hide: true },
  }, async (_request, reply) => {
    if (!apkPath) throw notFound('no Android app on this service: the operator sets ANDROID_APK_PATH to the .apk file to offer here');
    const file = await stat(apkPath).catch(() => null);
    if (!file?.isFile()) throw notFound('the Android app file named by ANDROID_APK_PATH is missing on this service; tell its operator');
    return reply
      .header('content-type', 'application/vnd.android.package-archive')
      .header('content-disposition', 'attachment; filename="mandate.apk"')
      .header('content-length', String(file.size))
      .header('cache-control', 'no-cache')
      .send(createReadStream(apkPath));
  });
}
