// The same notes MCP server on Express: node --import tsx examples/mcp-server/express.ts
// Environment as server.ts (config.ts).
import { createServer } from 'node:http';
import express from 'express';
import { mcpMetadata, requireMcpAuth } from '@mandate/site/express';
import { protectNotes } from './auth.ts';
import { listeningLine, loadConfig } from './config.ts';
import { Notes } from './notes.ts';
import { serveMcp } from './tools.ts';
import { startAndServe } from './lifecycle.ts';

const config = loadConfig();
const mandate = protectNotes(config);
const notes = new Notes();

const app = express();
app.disable('x-powered-by');
app.get('/healthz', (_req, res) => void res.json(mandate.status()));
app.use(mcpMetadata(mandate)); // GET /.well-known/oauth-protected-resource/mcp
app.all('/mcp', express.json({ limit: '1mb' }), requireMcpAuth(mandate), (req, res, next) => {
  serveMcp(mandate, notes, req, res, req.body).catch(next);
});

await startAndServe(mandate, createServer(app), config, listeningLine(config, 'Express'));
