import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { loadOpenApiTools } from '../src/mcp/openapi/load.ts';
import { type SiteOperationTool, ToolArgumentError } from '../src/mcp/site-tool.ts';
import { type Child, runNode } from '../../server/test/helpers/child-process.ts';
import { markedBlocks } from '../../server/test/helpers/doc-examples.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';

// `mandate-agent mcp --openapi`: descriptions read from files and from a local HTTP server, turned
// into tools, and the requests those tools make; last, the demo shop's own /openapi.json.

const STORE_YAML = fileURLToPath(new URL('./fixtures/openapi/store.yaml', import.meta.url));

/** A description in OpenAPI 3.1, to serve or write as needed; `extra` paths are merged in. */
function ordersApi(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Orders', version: '1' },
    servers: [{ url: '/v1' }],
    paths: {
      '/orders': {
        post: {
          operationId: 'createOrder',
          'x-authyouragent': { name: 'create_order', scopes: ['orders:write'], stepup: true, description: 'Place an order.' },
          parameters: [{ name: 'dry_run', in: 'query', schema: { type: 'boolean' } }],
          requestBody: { required: true, content: { 'application/json; charset=utf-8': { schema: { $ref: '#/components/schemas/Order' } } } },
          responses: { '201': { description: 'ok' } },
        },
      },
      '/orders/{id}': {
        put: {
          'x-mandate': { name: 'replace_order', scopes: ['orders:write'] },
          'x-authyouragent': { name: 'ignored_because_x_mandate_wins' },
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          // `id` is also a body property: the body stays whole, under `body`.
          requestBody: { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object', properties: { id: { type: 'string' }, note: { type: ['string', 'null'] } } } } } },
          responses: { '200': { description: 'ok' } },
        },
        delete: {
          'x-mandate': false,
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '204': { description: 'gone' } },
        },
      },
      ...extra,
    },
    components: {
      schemas: {
        Order: {
          type: 'object',
          required: ['items'],
          properties: {
            items: { type: 'array', minItems: 1, items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } } },
            note: { type: 'string' },
          },
        },
      },
    },
  };
}

/** A local HTTP server answering each path with what `routes` says. */
async function serve(routes: Record<string, { status?: number; type: string; body: string }>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (!route) return void res.writeHead(404).end('not found');
    if (route.status && route.status >= 300 && route.status < 400) return void res.writeHead(route.status, { location: route.body }).end();
    res.writeHead(route.status ?? 200, { 'content-type': route.type }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function tool(tools: SiteOperationTool[], name: string): SiteOperationTool {
  const t = tools.find((x) => x.name === name);
  assert.ok(t, `no tool ${name} in ${tools.map((x) => x.name).join(', ')}`);
  return t;
}

/** Runs `toRequest` expecting a ToolArgumentError; answers its message ("field: why"). */
function refusal(t: SiteOperationTool, args: Record<string, unknown>): string {
  try {
    t.toRequest(args);
  } catch (e) {
    assert.ok(e instanceof ToolArgumentError, `not a ToolArgumentError: ${String(e)}`);
    return e.message;
  }
  assert.fail(`accepted ${JSON.stringify(args)}`);
}

async function loadError(sources: string[], allOperations = false): Promise<string> {
  try {
    await loadOpenApiTools(sources, { allOperations });
  } catch (e) {
    assert.ok(e instanceof Error);
    return e.message;
  }
  assert.fail(`loaded ${sources.join(' ')}`);
}

/** Runs `fn` and answers the process warnings it emitted. */
async function warningsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (w: Error) => seen.push(w.message);
  process.on('warning', listener);
  try {
    await fn();
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

describe('OpenAPI tools: a YAML file with $refs', () => {
  let tools: SiteOperationTool[];
  before(async () => {
    tools = await loadOpenApiTools([STORE_YAML], { allOperations: false });
  });

  it('offers the marked operations only, with their marks', () => {
    assert.deepEqual(tools.map((t) => [t.name, t.site, t.scopes, t.stepup, t.description]), [
      ['list_items', 'store.example', ['items:read'], false, "Lists the store's items."],
      ['update_item', 'store.example', ['items:write'], true, 'Change an item'],
    ]);
  });

  it('builds the input schema from $ref\'d parameters (one in another file) and a $ref\'d body merged at the top level', () => {
    assert.deepEqual(tool(tools, 'list_items').inputSchema, {
      type: 'object',
      properties: {
        tag: { type: 'array', items: { type: 'string', enum: ['red', 'blue'] } },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'At most this many' },
      },
      additionalProperties: false,
    });
    const update = tool(tools, 'update_item').inputSchema;
    assert.deepEqual(Object.keys(update.properties), ['item_id', 'name', 'price', 'parts']);
    assert.deepEqual(update.required, ['item_id', 'name']);
    assert.deepEqual(update.properties['item_id'], { type: 'string', description: 'The item' });
    // OpenAPI 3.0's boolean exclusiveMinimum becomes JSON Schema's number; the recursive Part stops at its recursion.
    assert.deepEqual(update.properties['price'], { type: 'number', exclusiveMinimum: 0, nullable: true });
    assert.deepEqual(update.properties['parts'], { type: 'array', items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' }, parts: { type: 'array', items: {} } } } });
    JSON.stringify(tools.map((t) => t.inputSchema)); // no cycles left
  });

  it('makes the request: base URL with server variables, encoded path, repeated query values, JSON body', () => {
    assert.deepEqual(tool(tools, 'list_items').toRequest({ tag: ['red', 'blue'], limit: 5 }), {
      url: 'https://store.example/api/v1/items?tag=red&tag=blue&limit=5',
      method: 'GET',
      headers: {},
    });
    assert.deepEqual(tool(tools, 'list_items').toRequest({}).url, 'https://store.example/api/v1/items');
    assert.deepEqual(tool(tools, 'update_item').toRequest({ item_id: 'a/b?c#d %', name: 'Lamp', price: null, parts: [{ sku: 's1', parts: [{ sku: 's2' }] }] }), {
      url: 'https://store.example/api/v1/items/a%2Fb%3Fc%23d%20%25',
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Lamp', price: null, parts: [{ sku: 's1', parts: [{ sku: 's2' }] }] }),
    });
  });

  it('refuses arguments that do not fit, naming the field', () => {
    const update = tool(tools, 'update_item');
    assert.equal(refusal(update, { name: 'x' }), 'item_id: is required');
    assert.equal(refusal(update, { item_id: 'i1' }), 'name: is required');
    assert.equal(refusal(update, { item_id: 'i1', name: 7 }), 'name: must be string');
    assert.equal(refusal(update, { item_id: 'i1', name: 'x', price: 0 }), 'price: must be > 0');
    assert.equal(refusal(update, { item_id: 'i1', name: 'x', parts: [{ sku: 's' }, { qty: 1 }] }), 'parts[1].sku: is required');
    assert.equal(refusal(update, { item_id: 'i1', name: 'x', colour: 'red' }), 'colour: is not an argument of this tool');
    assert.equal(refusal(tool(tools, 'list_items'), { tag: ['green'] }), 'tag[0]: must be one of "red", "blue"');
    assert.equal(refusal(tool(tools, 'list_items'), { limit: '5' }), 'limit: must be integer');
  });

  it('refuses path values that would leave their segment', () => {
    const update = tool(tools, 'update_item');
    assert.equal(refusal(update, { item_id: '..', name: 'x' }), 'item_id: must not be empty, "." or ".."');
    assert.equal(refusal(update, { item_id: '.', name: 'x' }), 'item_id: must not be empty, "." or ".."');
    assert.equal(refusal(update, { item_id: '', name: 'x' }), 'item_id: must not be empty, "." or ".."');
    assert.equal(update.toRequest({ item_id: '../admin', name: 'x' }).url, 'https://store.example/api/v1/items/..%2Fadmin');
  });

  it('refuses a body over 1 MB', () => {
    const update = tool(tools, 'update_item');
    assert.equal(refusal(update, { item_id: 'i1', name: 'x'.repeat(1024 * 1024) }), 'body: is larger than 1 MB');
    assert.ok(update.toRequest({ item_id: 'i1', name: 'x'.repeat(1024 * 1024 - 20) }).body);
  });

  it('--site sets the site of every tool', async () => {
    const withSite = await loadOpenApiTools([STORE_YAML], { allOperations: false, site: 'Shop.Example:8443' });
    assert.deepEqual(withSite.map((t) => t.site), ['shop.example:8443', 'shop.example:8443']);
    await assert.rejects(loadOpenApiTools([STORE_YAML], { allOperations: false, site: 'https://shop.example/' }), /invalid site "https:\/\/shop\.example\/": use the site's host name/);
  });

  it('--all-operations adds the unmarked ones, named from operationId, scope guessed from the method', async () => {
    const all = await loadOpenApiTools([STORE_YAML], { allOperations: true });
    assert.deepEqual(all.map((t) => [t.name, t.scopes, t.stepup, t.description]), [
      ['list_items', ['items:read'], false, "Lists the store's items."],
      ['getItem', ['read'], false, 'One item'],
      ['update_item', ['items:write'], true, 'Change an item'],
    ]);
    assert.equal(tool(all, 'getItem').toRequest({ item_id: 'i 1' }).url, 'https://store.example/api/v1/items/i%201');
  });
});

describe('OpenAPI tools: descriptions read from URLs', () => {
  let site: { url: string; close(): Promise<void> };
  before(async () => {
    site = await serve({
      '/openapi.json': { type: 'application/json', body: JSON.stringify(ordersApi()) },
      '/openapi.yaml': { type: 'application/yaml', body: toYaml(ordersApi()) },
      '/moved': { status: 302, type: '', body: '/docs/openapi.json' },
      '/docs/openapi.json': { type: 'application/json', body: JSON.stringify({ ...ordersApi(), servers: [{ url: 'api' }] }) },
      '/swagger.json': { type: 'application/json', body: JSON.stringify({ swagger: '2.0', info: { title: 'old', version: '1' }, paths: {} }) },
      '/page': { type: 'text/html', body: '<html><body>Welcome</body></html>' },
      '/package.json': { type: 'application/json', body: '{"name": "not-openapi"}' },
      '/broken.json': { type: 'application/json', body: '{"openapi": "3.1.0", "paths": ' },
      '/external-ref.json': { type: 'application/json', body: JSON.stringify(ordersApi({ '/x': { get: { 'x-mandate': {}, parameters: [{ $ref: 'params.json#/P' }], responses: {} } } })) },
    });
  });
  after(() => site.close());

  it('reads JSON and YAML alike; relative server URLs resolve against the description URL; the site is host:port', async () => {
    for (const path of ['/openapi.json', '/openapi.yaml']) {
      const tools = await loadOpenApiTools([site.url + path], { allOperations: false });
      assert.deepEqual(tools.map((t) => [t.name, t.site, t.scopes, t.stepup]), [
        ['create_order', new URL(site.url).host, ['orders:write'], true],
        ['replace_order', new URL(site.url).host, ['orders:write'], false],
      ], path);
      assert.equal(tool(tools, 'create_order').description, 'Place an order.');
    }
  });

  it('resolves against the URL after redirects', async () => {
    const [create] = await loadOpenApiTools([`${site.url}/moved`], { allOperations: false });
    assert.equal(create?.toRequest({ items: [{ sku: 'a' }] }).url, `${site.url}/docs/api/orders`);
  });

  it('merges the body unless a name clashes, then keeps it under `body`, sent with its own content type', async () => {
    const tools = await loadOpenApiTools([`${site.url}/openapi.json`], { allOperations: false });
    const create = tool(tools, 'create_order');
    assert.deepEqual(Object.keys(create.inputSchema.properties), ['dry_run', 'items', 'note']);
    assert.deepEqual(create.toRequest({ dry_run: true, items: [{ sku: 'a', qty: 2 }] }), {
      url: `${site.url}/v1/orders?dry_run=true`,
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"items":[{"sku":"a","qty":2}]}',
    });
    assert.equal(refusal(create, { items: [] }), 'items: must NOT have fewer than 1 items');
    assert.equal(refusal(create, { items: [{ sku: 'a', qty: 0 }] }), 'items[0].qty: must be >= 1');

    const replace = tool(tools, 'replace_order');
    assert.deepEqual(replace.inputSchema.required, ['id', 'body']);
    assert.deepEqual(replace.toRequest({ id: 'o1', body: { id: 'o1', note: null } }), {
      url: `${site.url}/v1/orders/o1`,
      method: 'PUT',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"id":"o1","note":null}',
    });
    assert.equal(refusal(replace, { id: 'o1', body: { note: 5 } }), 'body.note: must be string,null');
    assert.equal(refusal(replace, { id: 'o1' }), 'body: is required');
  });

  it('x-mandate false keeps an operation out even with --all-operations', async () => {
    const all = await loadOpenApiTools([`${site.url}/openapi.json`], { allOperations: true });
    assert.deepEqual(all.map((t) => t.name), ['create_order', 'replace_order']);
  });

  it('refuses what is not an OpenAPI 3 description, saying so', async () => {
    assert.match(await loadError([`${site.url}/swagger.json`]), /swagger\.json: Swagger 2\.0 is not supported: convert it to OpenAPI 3/);
    assert.match(await loadError([`${site.url}/page`]), /\/page: it is not an OpenAPI description/);
    assert.match(await loadError([`${site.url}/package.json`]), /package\.json: it is not an OpenAPI 3 description/);
    assert.match(await loadError([`${site.url}/broken.json`]), /broken\.json: /);
    assert.match(await loadError([`${site.url}/missing.json`]), /missing\.json: the site answered HTTP 404; check the URL/);
    assert.match(await loadError(['ftp://example.com/openapi.json']), /only http\(s\) URLs and file paths/);
  });

  it('does not read local files for a relative $ref in a downloaded description', async () => {
    assert.match(await loadError([`${site.url}/external-ref.json`]), /external-ref\.json: /);
  });

  it('says when the site cannot be reached', async () => {
    const port = await freePort();
    assert.match(await loadError([`http://127.0.0.1:${port}/openapi.json`]), /cannot download it \(ECONNREFUSED\); check the URL and that the site is running/);
  });

  it('refuses two tools of one name, naming both operations', async () => {
    const message = await loadError([`${site.url}/openapi.json`, `${site.url}/openapi.yaml`]);
    assert.equal(message, `two operations would be the tool "create_order": POST /orders in ${site.url}/openapi.json and POST /orders in ${site.url}/openapi.yaml; rename one (x-mandate "name")`);
  });
});

describe('OpenAPI tools: descriptions that cannot become tools', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mandate-openapi-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function file(name: string, doc: unknown): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
    return path;
  }
  const absolute = (doc: Record<string, unknown>) => ({ ...doc, servers: [{ url: 'https://api.example' }] });

  it('a file without an absolute server URL', async () => {
    const path = await file('relative.json', ordersApi());
    assert.equal(
      await loadError([path]),
      `POST /orders in ${path}: the server URL "/v1" is not absolute and the description is a file: give "servers" an absolute URL, or pass the description's URL instead`,
    );
  });

  it('a file that is missing or not YAML', async () => {
    assert.match(await loadError([join(dir, 'nope.yaml')]), /nope\.yaml: .*ENOENT/);
    assert.match(await loadError([await file('bad.yaml', 'openapi: [3.1\n  : :')]), /bad\.yaml: /);
  });

  it('no marked operation, without --all-operations', async () => {
    const path = await file('unmarked.json', absolute({ openapi: '3.0.0', info: { title: 'x', version: '1' }, paths: { '/a': { get: { responses: {} } } } }));
    assert.equal(await loadError([path]), `--openapi ${path}: no operation is marked with x-mandate; mark the ones agents may call, or pass --all-operations to offer every operation`);
    const [a] = await loadOpenApiTools([path], { allOperations: true });
    assert.deepEqual([a?.name, a?.scopes, a?.description, a?.site], ['get_a', ['read'], 'GET /a', 'api.example']);
  });

  it('a mark of the wrong shape, or a tool name that is not one', async () => {
    const doc = (mark: unknown) => absolute({ openapi: '3.1.0', info: { title: 'x', version: '1' }, paths: { '/a': { get: { 'x-mandate': mark, responses: {} } } } });
    assert.match(await loadError([await file('m1.json', doc('yes'))]), /GET \/a in .*m1\.json: x-mandate must be an object/);
    assert.match(await loadError([await file('m2.json', doc({ scopes: 'read' }))]), /"scopes" must be a non-empty list/);
    assert.match(await loadError([await file('m3.json', doc({ name: 'buy now!' }))]), /the tool name "buy now!" is not 1-64 of/);
    const [t] = await loadOpenApiTools([await file('m4.json', doc(true))], { allOperations: false });
    assert.deepEqual([t?.name, t?.scopes, t?.stepup], ['get_a', ['read'], false]);
  });

  it('names from operationId are sanitized; scopes guessed for each method', async () => {
    const op = (operationId?: string) => ({ ...(operationId ? { operationId } : {}), responses: {} });
    const path = await file('guess.json', absolute({
      openapi: '3.1.0',
      info: { title: 'x', version: '1' },
      paths: {
        '/things/{id}': {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
          get: op('things.get by id'), put: op('things/put'), patch: op(), delete: op('x'.repeat(80)),
        },
        '/things': { post: op('ünïcode only ✓') },
      },
    }));
    const all = await loadOpenApiTools([path], { allOperations: true });
    assert.deepEqual(all.map((t) => [t.name, t.scopes]), [
      ['things_get_by_id', ['read']],
      ['things_put', ['write']],
      ['patch_things_id', ['write']],
      ['x'.repeat(64), ['delete']],
      ['n_code_only', ['write']],
    ]);
    assert.equal(refusal(tool(all, 'things_get_by_id'), { id: 'seven' }), 'id: must be integer');
    assert.equal(tool(all, 'things_get_by_id').toRequest({ id: 7 }).url, 'https://api.example/things/7');
  });

  it('an unmarked operation that cannot be a tool is left out with a warning; a marked one is an error', async () => {
    const upload = (mark: unknown) => absolute({
      openapi: '3.1.0',
      info: { title: 'x', version: '1' },
      paths: {
        '/ok': { get: { operationId: 'ok', responses: {} } },
        '/upload': { post: { ...(mark ? { 'x-mandate': mark } : {}), operationId: 'upload', requestBody: { required: true, content: { 'multipart/form-data': { schema: {} } } }, responses: {} } },
      },
    });
    const unmarked = await file('upload.json', upload(undefined));
    let tools: SiteOperationTool[] = [];
    const warnings = await warningsOf(async () => {
      tools = await loadOpenApiTools([unmarked], { allOperations: true });
    });
    assert.deepEqual(tools.map((t) => t.name), ['ok']);
    assert.deepEqual(warnings, [`left out: POST /upload in ${unmarked}: its request body is not JSON (multipart/form-data); only JSON bodies are supported`]);
    const marked = await file('upload-marked.json', upload({ scopes: ['files'] }));
    assert.equal(await loadError([marked]), `POST /upload in ${marked}: its request body is not JSON (multipart/form-data); only JSON bodies are supported`);
  });

  it('names clash inside one description too', async () => {
    const path = await file('clash.json', absolute({
      openapi: '3.1.0',
      info: { title: 'x', version: '1' },
      paths: { '/a': { get: { 'x-mandate': { name: 'same' }, responses: {} } }, '/b': { get: { 'x-mandate': { name: 'same' }, responses: {} } } },
    }));
    assert.equal(await loadError([path]), `two operations would be the tool "same": GET /a in ${path} and GET /b in ${path}; rename one (x-mandate "name")`);
  });
});

describe('OpenAPI tools: the demo shop describes itself', () => {
  let shop: Child;
  let base = '';
  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Cloud mode asks Mandate only when an agent calls; reading the description needs no Mandate.
    shop = runNode('demo shop', ['--import', 'tsx', 'examples/demo-shop/shop.ts'], { env: {
      MANDATE_URL: `http://127.0.0.1:${await freePort()}`, MANDATE_MODE: 'cloud', SITE_ID: 'shop.example', PUBLIC_BASE_URL: base, PORT: String(port), HOST: '127.0.0.1',
    } });
    await shop.waitFor('demo shop listening on', 60_000);
  });
  after(() => shop.stop());

  it('GET /openapi.json in public gives the three tools with their scopes and step-up', async () => {
    const tools = await loadOpenApiTools([`${base}/openapi.json`], { allOperations: false });
    const site = new URL(base).host;
    assert.deepEqual(tools.map((t) => [t.name, t.site, t.scopes, t.stepup]), [
      ['list_products', site, ['list'], false],
      ['list_orders', site, ['orders:read'], false],
      ['checkout', site, ['checkout'], true],
    ]);
    const withSite = await loadOpenApiTools([`${base}/openapi.json`], { allOperations: true, site: 'shop.example' });
    assert.deepEqual(withSite.map((t) => t.site), ['shop.example', 'shop.example', 'shop.example']);

    const checkout = tool(tools, 'checkout');
    assert.deepEqual(checkout.inputSchema.required, ['product_id']);
    assert.deepEqual(checkout.toRequest({ product_id: 'p1', quantity: 2 }), {
      url: `${base}/checkout`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"product_id":"p1","quantity":2}',
    });
    assert.equal(refusal(checkout, { product_id: 'p1', quantity: 11 }), 'quantity: must be <= 10');
    assert.equal(refusal(checkout, { quantity: 1 }), 'product_id: is required');

    // The URLs the tools make are the shop's routes: without a pass they are refused, not unknown.
    for (const t of tools) {
      const r = t.toRequest(t.name === 'checkout' ? { product_id: 'p1' } : {});
      const res = await fetch(r.url, { method: r.method, headers: r.headers, ...(r.body === undefined ? {} : { body: r.body }) });
      assert.equal(res.status, 401, `${t.name}: ${res.status}`);
      await res.body?.cancel();
    }
  });
});

describe('docs/sites/openapi-tools.md', () => {
  it('its marked description gives the tools it says', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mandate-openapi-doc-'));
    try {
      const path = join(dir, 'orders.yaml');
      await writeFile(path, markedBlocks('docs/sites/openapi-tools.md').block('openapi', 'orders.yaml'));
      for (const allOperations of [false, true]) {
        const tools = await loadOpenApiTools([path], { allOperations });
        assert.deepEqual(tools.map((t) => [t.name, Object.keys(t.inputSchema.properties), t.site, t.scopes, t.stepup]), [
          ['list_orders', ['status'], 'shop.example', ['orders:read'], false],
          ['place_order', ['product_id', 'quantity'], 'shop.example', ['checkout'], true],
        ]);
        assert.equal(refusal(tool(tools, 'place_order'), { product_id: 'p1', quantity: 11 }), 'quantity: must be <= 10');
        assert.equal(tool(tools, 'list_orders').toRequest({ status: 'open' }).url, 'https://shop.example/api/orders?status=open');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
