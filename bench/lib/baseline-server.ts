/**
 * The baseline of the cloud verify benchmark, as its own process: a bare Fastify app whose one route
 * does one ES256 `jwtVerify` (jose) of the `access_token` in the JSON body against a fixed public key.
 * The benchmark sends it the very bodies it sends to `POST /api/v1/verify` (same size, same fixed pass),
 * so the two differ only in what the route does. Env: PORT, BASELINE_JWK (the public JWK).
 */
import Fastify from 'fastify';
import { importJWK, jwtVerify, type JWK } from 'jose';

const key = await importJWK(JSON.parse(process.env.BASELINE_JWK ?? '{}') as JWK, 'ES256');
const app = Fastify({ logger: false });

app.get('/healthz', async () => ({ ok: true }));
app.post('/verify', async (request) => {
  const body = request.body as { access_token?: unknown };
  const { payload } = await jwtVerify(String(body.access_token), key, { algorithms: ['ES256'] });
  return { valid: true, sub: payload.sub };
});

const stop = async () => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
