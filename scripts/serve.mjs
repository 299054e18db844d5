// Serves a built site folder on localhost with the headers netlify.toml sets in production
// (read from netlify.toml itself: wasm MIME type, CSP, framing, caching), so local runs and
// browser tests see what users see.
// Usage: node scripts/serve.mjs [DIR=build/site] [--port N]   (import: serve(dir, {port}))
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'smol-toml';

const kTypes = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.txt': 'text/plain; charset=utf-8',
};

// netlify.toml's [[headers]] rules, in order: a path matching `for` (Netlify's splat '*')
// gets its values, a later rule's value replacing an earlier one's.
const kNetlify = parse(readFileSync(new URL('../netlify.toml', import.meta.url), 'utf8'));
export const kHeaderRules = (kNetlify.headers ?? []).map((rule) => ({
  pattern: new RegExp(`^${rule.for.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`),
  values: rule.values ?? {},
}));

export function headersFor(path) {
  const out = {};
  for (const rule of kHeaderRules) if (rule.pattern.test(path)) Object.assign(out, rule.values);
  return out;
}

export function serve(dir, { port = 0, host = '127.0.0.1' } = {}) {
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(root, path));
      if (file !== root && !file.startsWith(root + sep)) throw new Error('outside');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, {
        'Content-Type': kTypes[extname(file)] ?? 'application/octet-stream',
        // Netlify's default for files without a rule: revalidate every time.
        'Cache-Control': 'no-cache',
        ...headersFor(path),
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((ok) => server.listen(port, host, () => {
    ok({ server, url: `http://${host}:${server.address().port}/` });
  }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const p = args.indexOf('--port');
  const port = p >= 0 ? Number(args.splice(p, 2)[1]) : 8080;
  const { url } = await serve(args[0] ?? 'build/site', { port });
  console.log(`gpuplan: serving ${args[0] ?? 'build/site'} at ${url} (Ctrl-C stops)`);
}
