// Serves a built site folder on localhost with the headers netlify.toml sets in production
// (wasm MIME type, CSP, framing allowed), so local runs and browser tests see what users see.
// Usage: node scripts/serve.mjs [DIR=build/site] [--port N]   (import: serve(dir, {port}))
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const kTypes = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.txt': 'text/plain; charset=utf-8',
};

// The same policy as netlify.toml: the page needs only itself, blob-free workers, wasm, and
// (for a custom catalog by URL) any https origin the user names.
export const kSecurityHeaders = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; " +
    "style-src 'self'; img-src 'self' data:; connect-src 'self' https:; " +
    "frame-ancestors *; base-uri 'none'; form-action 'none'; object-src 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

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
        // As netlify.toml: the content-hashed engine folder is immutable, the rest revalidates.
        'Cache-Control': path.startsWith('/engine/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        ...kSecurityHeaders,
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
