// The embedded database's directory through Node's file system (PGlite's NodeFS), with no permission for the group or
// others on anything PostgreSQL creates in it, whatever the process's umask. Emscripten's FS.open chmods a file it has
// just created to the mode PostgreSQL asked for, masked by Emscripten's own umask (022), which the process's umask
// does not reach: the files PostgreSQL opens with fopen (pg_internal.init, the statistics it writes at a stop) ask
// for 0666 and came out 0644. Every chmod of this file system takes the group and other bits off.
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

type EmscriptenOptions = Awaited<ReturnType<NodeFS['init']>>['emscriptenOpts'];
type Module = Parameters<NonNullable<EmscriptenOptions['preRun']>[number]>[0];

export class OwnerOnlyNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Partial<Module>): Promise<{ emscriptenOpts: EmscriptenOptions }> {
    const { emscriptenOpts } = await super.init(pg, opts);
    const ownerOnly = (mod: Module) => {
      const chmod = mod.FS.chmod;
      mod.FS.chmod = (path: unknown, mode: number, dontFollow?: boolean) => chmod(path, mode & ~0o077, dontFollow);
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), ownerOnly] } };
  }
}
