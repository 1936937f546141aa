import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { addressProblem, isPublicAddress, parseIpv6 } from '../src/outbound/address-policy.ts';
import { checkOutboundUrl, outboundUrlProblem } from '../src/outbound/url-policy.ts';
import { OUTBOUND_BODY_CAP, connectedAddressProblem, guardedFetch, type ResolveHost } from '../src/outbound/guarded-fetch.ts';
import { OutboundError, type OutboundPolicy, type OutboundRefusal } from '../src/outbound/types.ts';

const strict: OutboundPolicy = { allowLoopback: false };
const loopbackAllowed: OutboundPolicy = { allowLoopback: true };

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OutboundError, `expected an OutboundError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the fetch to be refused');
}

async function listenOnLoopback(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

describe('address policy', () => {
  const refused: [string, string][] = [
    ['0.0.0.0', 'this network'], ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'private'], ['10.255.255.255', 'private'],
    ['100.64.0.1', 'CGNAT'], ['100.127.255.254', 'CGNAT'],
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'], ['172.31.255.255', 'private'],
    ['192.0.0.8', 'IETF'], ['192.0.2.1', 'documentation'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'], ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'], ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'], ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'], ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'], ['0000::0001', 'loopback'],
    ['fc00::1', 'unique local'], ['fd12:3456:789a::1', 'unique local'],
    ['fe80::1', 'link-local'], ['FEBF::1', 'link-local'], ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'], ['ff0e::1', 'multicast'],
    ['2001:db8::1', 'documentation'], ['2001:0db8:0:0:0:0:0:1', 'documentation'], ['3fff::1', 'documentation'],
    ['100::1', 'discard'], ['2001::1', 'Teredo'], ['2001:2::1', 'benchmarking'], ['4000::1', 'not global unicast'],
    // IPv4-mapped: judged as the IPv4 address, whatever the spelling.
    ['::ffff:127.0.0.1', 'IPv4-mapped form of 127.0.0.1, loopback'], ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a00:1', 'IPv4-mapped form of 10.0.0.1, private'], ['::FFFF:169.254.169.254', 'link-local'],
    ['::ffff:100.64.0.1', 'CGNAT'], ['::ffff:0.0.0.0', 'this network'],
    // NAT64 (well-known and local-use prefixes).
    ['64:ff9b::7f00:1', 'NAT64 form of 127.0.0.1, loopback'], ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'], ['64:ff9b:1::c0a8:101', 'local-use NAT64 form of 192.168.1.1'],
    ['64:ff9b:1:ab::808:808', 'unrecognised layout'],
    // 6to4: the IPv4 sits in bits 16..47.
    ['2002:7f00:1::1', '6to4 form of 127.0.0.1'], ['2002:c0a8:101::', '6to4 form of 192.168.1.1'],
    // IPv4-compatible (deprecated), even for a public IPv4.
    ['::127.0.0.1', 'IPv4-compatible'], ['::8.8.8.8', 'IPv4-compatible'], ['::a00:1', 'IPv4-compatible'],
  ];
  for (const [ip, label] of refused) {
    it(`refuses ${ip} (${label})`, () => {
      const problem = addressProblem(ip, strict);
      assert.ok(problem !== null, `${ip} should be refused`);
      assert.ok(problem.includes(label), `"${problem}" should mention ${label}`);
      assert.equal(isPublicAddress(ip), false);
    });
  }

  it('refuses what is not a bare IP address, zone ids included', () => {
    for (const text of ['fe80::1%eth0', 'fe80::1%25eth0', '[::1]', '1.2.3', '01.2.3.4', '1.2.3.256', '0x7f.0.0.1', 'example.com', '', '1::2::3', '12345::1', '1:2:3:4:5:6:7:8:9', '::ffff:1.2.3', '1:2:3:4:5:6::1.2.3.4']) {
      assert.notEqual(addressProblem(text, loopbackAllowed), null, `${text} should be refused`);
    }
  });

  it('lets public addresses through, including the neighbours of every refused IPv4 range', () => {
    const publicAddresses = [
      '8.8.8.8', '1.1.1.1', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '126.255.255.255', '128.0.0.0',
      '169.253.255.255', '169.255.0.0', '172.15.255.255', '172.32.0.0', '192.0.1.0', '192.0.3.0', '192.167.255.255',
      '192.169.0.0', '198.17.255.255', '198.20.0.0', '198.51.99.255', '203.0.112.255', '223.255.255.255',
      '2606:4700::1111', '2606:4700:4700::1111', '2a00:1450:4001:80e::200e', '2001:4860:4860::8888',
      '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::808:808', '64:ff9b::1.1.1.1', '64:ff9b:1::808:808', '2002:808:808::1',
    ];
    for (const ip of publicAddresses) {
      assert.equal(addressProblem(ip, strict), null, `${ip} is public`);
      assert.equal(isPublicAddress(ip), true);
    }
  });

  it('with allowLoopback allows 127/8, ::1 and mapped 127/8, and nothing else', () => {
    for (const ip of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:2']) {
      assert.equal(addressProblem(ip, loopbackAllowed), null, `${ip} allowed`);
      assert.notEqual(addressProblem(ip, strict), null, `${ip} refused without allowLoopback`);
    }
    for (const ip of ['10.0.0.1', '169.254.169.254', '0.0.0.0', '::', 'fe80::1', 'fc00::1', '64:ff9b::7f00:1', '2002:7f00:1::', '::127.0.0.1', '100.64.0.1']) {
      assert.notEqual(addressProblem(ip, loopbackAllowed), null, `${ip} still refused`);
    }
  });

  it('parses IPv6 the way node:net validates it', () => {
    for (const text of ['::', '::1', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '::ffff:1.2.3.4', 'a:b::c:1.2.3.4', ':::', ':1::', '1:::2', 'g::', '1:2:3:4:5:6:7:8:', '1:2:3:4:5:6:7']) {
      assert.equal(parseIpv6(text) !== null, net.isIPv6(text), text);
    }
    assert.deepEqual(parseIpv6('2001:db8::ffff:1.2.3.4'), [0x2001, 0xdb8, 0, 0, 0, 0xffff, 0x102, 0x304]);
  });
});

describe('url policy', () => {
  it('accepts an https: URL on a hostname', () => {
    assert.equal(outboundUrlProblem('https://push.example.com/send/abc?x=1', strict), null);
    assert.equal(outboundUrlProblem('https://[2606:4700::1111]:8443/x', strict), null);
  });

  it('refuses http: unless loopback is allowed, and other schemes always', () => {
    assert.equal(checkOutboundUrl('http://push.example.com/', strict)?.reason, 'scheme');
    assert.equal(outboundUrlProblem('http://push.example.com/', strict, 'push endpoint'), 'push endpoint must be an https: URL');
    assert.equal(outboundUrlProblem('http://push.example.com/', loopbackAllowed), null);
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'data:text/plain,hi', 'javascript:alert(1)', 'ws://example.com/']) {
      assert.equal(checkOutboundUrl(url, loopbackAllowed)?.reason, 'scheme', url);
    }
  });

  it('refuses credentials, unparseable and overlong URLs', () => {
    assert.match(outboundUrlProblem('https://user:pw@example.com/', strict) ?? '', /user name or password/);
    assert.match(outboundUrlProblem('https://user@example.com/', strict) ?? '', /user name or password/);
    for (const url of ['not a url', '/relative/path', 'https://', 'https://exa mple.com/', '']) {
      assert.equal(checkOutboundUrl(url, strict)?.reason, 'url', url);
    }
    const long = `https://example.com/${'a'.repeat(2048)}`;
    assert.match(outboundUrlProblem(long, strict) ?? '', /2048 characters/);
    assert.equal(outboundUrlProblem(`https://example.com/${'a'.repeat(2048 - 20)}`, strict), null);
  });

  it('refuses literal non-public IPs in every spelling the URL parser accepts', () => {
    for (const url of ['https://10.0.0.1/', 'https://127.0.0.1:8443/', 'https://0x7f000001/', 'https://2130706433/', 'https://127.1/',
      'https://[::1]/', 'https://[::ffff:127.0.0.1]/', 'https://[64:ff9b::7f00:1]/', 'https://169.254.169.254/latest/meta-data', 'https://[fe80::1]/']) {
      const refusedUrl = checkOutboundUrl(url, strict);
      assert.equal(refusedUrl?.reason, 'address', url);
      assert.match(refusedUrl.message, /public address/);
    }
    assert.equal(checkOutboundUrl('http://10.0.0.1/', loopbackAllowed)?.reason, 'address');
  });

  it('counts localhost and *.localhost as loopback', () => {
    for (const url of ['https://localhost/', 'https://LOCALHOST./', 'https://api.localhost:8443/']) {
      assert.equal(checkOutboundUrl(url, strict)?.reason, 'address', url);
    }
    assert.equal(outboundUrlProblem('http://localhost:8080/', loopbackAllowed), null);
    assert.equal(outboundUrlProblem('http://127.0.0.1:8080/', loopbackAllowed), null);
  });
});

describe('connected socket check', () => {
  it('refuses a connection to a non-public or unknown remote address', () => {
    for (const remote of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.1.2.3', '64:ff9b::a00:1', undefined, '']) {
      assert.notEqual(connectedAddressProblem(remote, strict), null, String(remote));
    }
    assert.equal(connectedAddressProblem('8.8.8.8', strict), null);
    assert.equal(connectedAddressProblem('127.0.0.1', loopbackAllowed), null);
    assert.notEqual(connectedAddressProblem('10.1.2.3', loopbackAllowed), null);
  });
});

describe('guardedFetch against a local server', () => {
  const server = http.createServer();
  let base = '';
  let port = 0;
  let connections = 0;
  const requests: string[] = [];

  before(async () => {
    server.on('connection', () => connections++);
    server.on('request', (req, res) => {
      requests.push(req.url ?? '');
      switch (new URL(req.url ?? '/', 'http://server.test').pathname) {
        case '/hello':
          res.setHeader('x-multi', ['a', 'b']);
          res.setHeader('content-type', 'text/plain');
          res.end('hello world');
          return;
        case '/redirect':
          res.writeHead(302, { location: '/hello' });
          res.end();
          return;
        case '/exactly-cap':
          res.end(Buffer.alloc(OUTBOUND_BODY_CAP, 1));
          return;
        case '/over-cap-declared':
          res.end(Buffer.alloc(OUTBOUND_BODY_CAP + 1, 1));
          return;
        case '/over-cap-streamed':
          // No content-length: chunked, so only counting the bytes can notice.
          for (let i = 0; i < 5; i++) res.write(Buffer.alloc(16384, 2));
          res.end();
          return;
        case '/declares-huge':
          // Declares more than the cap and then stalls: only the declared length can refuse it early.
          res.writeHead(200, { 'content-length': String(OUTBOUND_BODY_CAP * 16) });
          res.write('x');
          return;
        case '/never':
          return;
        case '/slow-body':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          return;
        case '/echo': {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString('base64') }));
          });
          return;
        }
        default:
          res.statusCode = 404;
          res.end();
      }
    });
    port = await listenOnLoopback(server);
    base = `http://127.0.0.1:${port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const fetchLoopback = guardedFetch(loopbackAllowed);

  it('returns a 200 with its body and lower-case, joined headers', async () => {
    const response = await fetchLoopback(`${base}/hello`, { method: 'GET' });
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), 'hello world');
    assert.equal(response.headers['content-type'], 'text/plain');
    assert.equal(response.headers['x-multi'], 'a, b');
  });

  it('hands back a 302 without following it', async () => {
    const before = requests.length;
    const response = await fetchLoopback(`${base}/redirect`, { method: 'GET' });
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, '/hello');
    assert.deepEqual(requests.slice(before), ['/redirect']);
  });

  it('accepts a body of exactly the cap and refuses one byte more', async () => {
    const response = await fetchLoopback(`${base}/exactly-cap`, { method: 'GET' });
    assert.equal(response.body.length, OUTBOUND_BODY_CAP);
    const error = await refusal(fetchLoopback(`${base}/over-cap-declared`, { method: 'GET' }));
    assert.equal(error.reason, 'too_large');
    const declared = await refusal(guardedFetch(loopbackAllowed, { timeoutMs: 300 })(`${base}/declares-huge`, { method: 'GET' }));
    assert.equal(declared.reason, 'too_large');
  });

  it('refuses an over-cap body sent without content-length', async () => {
    const error = await refusal(fetchLoopback(`${base}/over-cap-streamed`, { method: 'GET' }));
    assert.equal(error.reason, 'too_large');
    const small = await refusal(guardedFetch(loopbackAllowed, { bodyCap: 10 })(`${base}/hello`, { method: 'GET' }));
    assert.equal(small.reason, 'too_large');
  });

  it('gives up with timeout on a server that never answers, and on a body that never ends', async () => {
    const quick = guardedFetch(loopbackAllowed, { timeoutMs: 100 });
    const started = Date.now();
    assert.equal((await refusal(quick(`${base}/never`, { method: 'GET' }))).reason, 'timeout');
    assert.equal((await refusal(quick(`${base}/slow-body`, { method: 'GET' }))).reason, 'timeout');
    assert.ok(Date.now() - started < 1000);
  });

  it('sends a POST body and its headers intact', async () => {
    const body = new Uint8Array([0, 1, 2, 250, 251, 252, 255]);
    const response = await fetchLoopback(`${base}/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'X-Token': 'secret-value', TTL: '60' },
      body,
    });
    const echoed = JSON.parse(response.body.toString()) as { method: string; headers: Record<string, string>; body: string };
    assert.equal(echoed.method, 'POST');
    assert.equal(echoed.headers['content-type'], 'application/octet-stream');
    assert.equal(echoed.headers['x-token'], 'secret-value');
    assert.equal(echoed.headers.ttl, '60');
    assert.equal(echoed.headers['content-length'], String(body.length));
    assert.deepEqual(new Uint8Array(Buffer.from(echoed.body, 'base64')), body);
    const text = await fetchLoopback(`${base}/echo`, { method: 'PUT', body: 'héllo' });
    assert.equal(Buffer.from((JSON.parse(text.body.toString()) as { body: string }).body, 'base64').toString(), 'héllo');
  });

  it('resolves a real hostname (localhost) when loopback is allowed', async () => {
    const response = await fetchLoopback(`http://localhost:${port}/hello`, { method: 'GET' });
    assert.equal(response.body.toString(), 'hello world');
  });

  it('without allowLoopback never connects to the same server', async () => {
    const fetchStrict = guardedFetch(strict);
    const before = connections;
    const cases: [string, OutboundRefusal][] = [
      [`${base}/hello`, 'scheme'],
      [`https://127.0.0.1:${port}/hello`, 'address'],
      [`https://[::1]:${port}/hello`, 'address'],
      [`https://[::ffff:127.0.0.1]:${port}/hello`, 'address'],
      [`https://localhost:${port}/hello`, 'address'],
    ];
    for (const [url, reason] of cases) {
      assert.equal((await refusal(fetchStrict(url, { method: 'GET' }))).reason, reason, url);
    }
    assert.equal(connections, before);
  });

  it('refuses at lookup a hostname that resolves to loopback, or to any non-public address', async () => {
    const asked: string[] = [];
    const answers: Record<string, string[]> = {
      'rebind.test': ['127.0.0.1'],
      'mixed.test': ['93.184.216.34', '10.0.0.1'],
      'mapped.test': ['::ffff:127.0.0.1'],
    };
    const resolveHost: ResolveHost = async (hostname) => {
      asked.push(hostname);
      const found = answers[hostname];
      if (found === undefined) throw new Error('ENOTFOUND');
      return found.map((address) => ({ address, family: net.isIP(address) }));
    };
    const fetchStrict = guardedFetch(strict, { resolveHost });
    const before = connections;
    for (const host of Object.keys(answers)) {
      const error = await refusal(fetchStrict(`https://${host}:${port}/hello`, { method: 'GET' }));
      assert.equal(error.reason, 'address', host);
      assert.match(error.message, new RegExp(`${host.replace('.', '\\.')} resolves to`));
    }
    assert.equal((await refusal(fetchStrict(`https://missing.test:${port}/`, { method: 'GET' }))).reason, 'dns');
    assert.deepEqual(asked, [...Object.keys(answers), 'missing.test']);
    assert.equal(connections, before);
    // The same resolver with loopback allowed does connect, so the refusals above came from the policy.
    const allowed = await guardedFetch(loopbackAllowed, { resolveHost })(`http://rebind.test:${port}/hello`, { method: 'GET' });
    assert.equal(allowed.status, 200);
  });

  it('keeps request paths and header values out of error messages', async () => {
    const quick = guardedFetch(loopbackAllowed, { timeoutMs: 50 });
    const error = await refusal(quick(`${base}/never?token=hunter2`, { method: 'POST', headers: { authorization: 'Bearer hunter2' }, body: 'hunter2' }));
    assert.doesNotMatch(error.message, /hunter2|never/);
    const badHeader = await refusal(fetchLoopback(`${base}/hello`, { method: 'GET', headers: { 'x-bad': 'hunter2\r\nInjected: yes' } }));
    assert.equal(badHeader.reason, 'network');
    assert.doesNotMatch(badHeader.message, /hunter2/);
  });
});

describe('guardedFetch checks the connected socket', () => {
  // A raw TCP server that records every byte and never answers.
  async function recordingServer(): Promise<{ port: number; received: () => number; closedConnections: Promise<void>; close: () => void }> {
    let bytes = 0;
    let markClosed: () => void = () => undefined;
    const closedConnections = new Promise<void>((resolve) => (markClosed = resolve));
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (chunk) => (bytes += chunk.length));
      socket.on('close', () => markClosed());
    });
    const port = await listenOnLoopback(server);
    return {
      port,
      received: () => bytes,
      closedConnections,
      close: () => {
        for (const socket of sockets) socket.destroy();
        server.close();
      },
    };
  }

  // Loopback is allowed for the URL and the DNS answer but not for the socket check (found by the
  // caller's name on the stack): the same situation as a DNS answer that changed between the
  // lookup and the connect. Only the check on the connected socket can refuse it.
  const allowedExceptOnSocket: OutboundPolicy = {
    get allowLoopback(): boolean {
      return !(new Error().stack ?? '').includes('connectedAddressProblem');
    },
  };
  const resolveToLoopback: ResolveHost = async () => [{ address: '127.0.0.1', family: 4 }];

  it('refuses after connect, before a single request byte is sent', async () => {
    const target = await recordingServer();
    try {
      const fetchGuarded = guardedFetch(allowedExceptOnSocket, { resolveHost: resolveToLoopback, timeoutMs: 500 });
      const error = await refusal(fetchGuarded(`http://changed.test:${target.port}/push`, { method: 'POST', body: 'payload' }));
      assert.equal(error.reason, 'address');
      assert.match(error.message, /connection/);
      await target.closedConnections;
      assert.equal(target.received(), 0);
    } finally {
      target.close();
    }
  });

  it('(control) the same server does record the request when the socket check passes', async () => {
    const target = await recordingServer();
    try {
      const fetchGuarded = guardedFetch(loopbackAllowed, { resolveHost: resolveToLoopback, timeoutMs: 100 });
      const error = await refusal(fetchGuarded(`http://changed.test:${target.port}/push`, { method: 'POST', body: 'payload' }));
      assert.equal(error.reason, 'timeout');
      await target.closedConnections;
      assert.ok(target.received() > 0);
    } finally {
      target.close();
    }
  });
});
