// A control for the machine's own noise: a bare HTTP server in a process of its own that no attacker reaches. When
// it answers slowly too, the machine (other processes on its cores, this test's client) was slow at that moment,
// not the service under test.
import { spawn } from 'node:child_process';

const SERVER = `require('node:http').createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

export interface ControlServer {
  url: string;
  close(): void;
}

export async function startControlServer(): Promise<ControlServer> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`the control server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/`, close: () => void child.kill('SIGKILL') };
}
