// A site where agents sign in with Mandate, on Express 5 and Auth.js (@auth/express).
//   AUTH_MANDATE_ISSUER  Mandate's base URL, e.g. https://mandate.example
//   AUTH_MANDATE_ID      the client_id Mandate gave at registration
//   AUTH_MANDATE_SECRET  its client_secret
//   AUTH_SECRET          32 random bytes or more (openssl rand -hex 32): encrypts the session cookie
//   PORT, HOST           where to listen (3000, 127.0.0.1)
// Register the client with the redirect URI <site>/auth/callback/mandate and the back-channel
// logout URI <site>/backchannel-logout. Run: node --import tsx examples/authjs-site/server.ts
import { ExpressAuth, getSession } from '@auth/express';
import express from 'express';
import { authConfig, clientId, ended, issuer } from './auth.ts';
import { backchannelLogout } from './backchannel-logout.ts';

const app = express();
app.set('trust proxy', true); // behind a TLS proxy, Auth.js sees https (and sets secure cookies)

// Outside /auth: everything under /auth is Auth.js's (/auth/signin, /auth/callback/mandate, ...).
app.post('/backchannel-logout', ...backchannelLogout({ issuer, clientId, endSession: (sid) => ended.end(sid) }));

app.use('/auth', ExpressAuth(authConfig));

// Who is signed in: 401 once signed out, or once Mandate ended the sign-in.
app.get('/me', async (req, res) => {
  const session = await getSession(req, authConfig);
  if (!session) {
    res.status(401).json({ error: 'not signed in' });
    return;
  }
  res.json(session);
});

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
app.listen(port, host, () => console.log(`listening on http://${host}:${port}`));
