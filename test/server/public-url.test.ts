// PUBLIC_URL's default names the port the process listens on: with PORT=0 (a port the system picks), the issuer of the
// tokens and the OAuth metadata's endpoints name that port, not port 0. The real entry point in a child process; the
// case is bounded step by step (test/support/step-bound.ts): its start and its stop.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../app/config.ts';
import { startServerProcess } from '../support/server-process.ts';
import { casesInSteps, PROCESS_STEP_BOUND_MS } from '../support/step-bound.ts';

const it = casesInSteps(PROCESS_STEP_BOUND_MS);

describe('PUBLIC_URL unset', function () {
  it('defaults to http://localhost:$PORT for a fixed port; with PORT=0 it waits for the port the system picks', async () => {
    assert.equal(loadConfig({ PORT: '8081' }).publicUrl, 'http://localhost:8081');
    assert.equal(loadConfig({ PORT: '0' }).publicUrl, undefined);
    assert.equal(loadConfig({ PORT: '0', PUBLIC_URL: 'https://api.example/' }).publicUrl, 'https://api.example');
  });

  it('with PORT=0, the OAuth issuer and its endpoints name the port the process listens on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sc-public-url-'));
    const server = startServerProcess({
      PORT: '0',
      PUBLIC_URL: undefined,
      DATA_DIR: join(dataDir, 'data'),
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      SHUTDOWN_DRAIN_SECONDS: '0',
    });
    try {
      const url = await server.listening;
      const port = new URL(url).port;
      assert.notEqual(port, '0');
      const metadata = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as {
        issuer: string;
        token_endpoint: string;
      };
      assert.equal(metadata.issuer, `http://localhost:${port}`);
      assert.equal(new URL(metadata.token_endpoint).port, port);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
