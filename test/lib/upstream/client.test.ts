import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../../lib/upstream/client.js';
import { MAX_METRICS_BYTES } from '../../../lib/upstream/engine-metrics.js';

describe("the network client reading a model server's metrics page", () => {
  let server: Server;
  let base = '';
  const seen: { url?: string; auth?: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url, auth: req.headers.authorization });
      if (req.url === '/ok/metrics') return void res.end('vllm:num_requests_running 3\nvllm:num_requests_waiting 0\n');
      // Chunked, so no content-length tells the size in advance.
      if (req.url === '/huge/metrics') {
        const line = `# ${'x'.repeat(1022)}\n`;
        for (let i = 0; i < MAX_METRICS_BYTES / 1024 + 8; i++) res.write(line);
        return void res.end();
      }
      res.statusCode = 404;
      res.end('not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("reads the page beside /v1 with the endpoints' key", async () => {
    const client = createUpstreamClient({ apiKey: 'gpu-key' });
    await expect(client.metrics(`${base}/ok/v1`, 2_000)).resolves.toContain('vllm:num_requests_running 3');
    expect(seen.at(-1)).toEqual({ url: '/ok/metrics', auth: 'Bearer gpu-key' });
    await client.close();
  });

  it('rejects a page that is not there, and one past the size bound, without reading it all', async () => {
    const client = createUpstreamClient();
    await expect(client.metrics(`${base}/none/v1`, 2_000)).rejects.toThrow(/answered 404/);
    await expect(client.metrics(`${base}/huge/v1`, 5_000)).rejects.toThrow(/larger than/);
    await client.close();
  });
});
