// The download spool (server/http/spool.ts): the client gets every byte in order as it is written, the file never
// holds more than its bound beyond what the client took, leaves no name on the disk, and a producer whose client is
// gone is told so at its next write, even while it waits for room.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSpool, SpoolClosed, type Spool } from '../../server/http/spool.ts';

async function drain(spool: Spool): Promise<string> {
  let text = '';
  for await (const chunk of spool.chunks()) text += chunk.toString('utf8');
  return text;
}

describe('spool', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'spool-test-'));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it('gives the client every byte in order, as it is written, and leaves no file behind', async () => {
    const spool = await openSpool(1024 * 1024, directory);
    assert.deepEqual(await readdir(directory), [], 'the name is gone once open');
    const client = drain(spool);
    const parts = Array.from({ length: 50 }, (_, i) => `part ${i} ${'é'.repeat(i)};`);
    for (const part of parts) await spool.write(part);
    spool.end();
    assert.equal(await client, parts.join(''));
    await spool.close();
  });

  it('holds at most its bound ahead of the client: the producer waits, then the file starts again', async () => {
    const spool = await openSpool(100, directory);
    const chunk = 'x'.repeat(60);
    await spool.write(chunk);
    let second = false;
    const writing = spool.write(chunk).then(() => (second = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(second, false, '120 bytes would exceed the bound of 100 before the client read anything');
    const client = drain(spool);
    await writing;
    await spool.write(chunk);
    spool.end();
    assert.equal(await client, chunk.repeat(3));
    await spool.close();
  });

  it('tells the producer the client is gone, also while it waits for room', async () => {
    const spool = await openSpool(10, directory);
    await spool.write('0123456789');
    const waiting = assert.rejects(spool.write('more'), SpoolClosed);
    await spool.close();
    await waiting;
    await assert.rejects(spool.write('after'), SpoolClosed);
  });

  it("rejects the client's start with the producer's failure before any byte, and a read after bytes", async () => {
    const early = await openSpool(1024, directory);
    early.fail(new Error('no such account'));
    await assert.rejects(early.started(), /no such account/);
    await early.close();

    const late = await openSpool(1024, directory);
    await late.write('{"partial":');
    await late.started();
    late.fail(new Error('connection terminated'));
    await assert.rejects(drain(late), /connection terminated/);
    await late.close();
  });
});
