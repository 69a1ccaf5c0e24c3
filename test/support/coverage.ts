// Coverage of the contract: for every operation of every surface, the statuses its spec documents against those
// the tests saw it answer. run-gate.ts writes the report at the end of a full run and fails the run on a gap;
// `npm run contract:coverage` prints it as a table. Webhook event kinds count too: a kind the spec documents that
// no test produced (and checked against the spec, test/support/event-contract.ts) is a gap like an untested status.
import { writeFileSync } from 'node:fs';
import type { Operation } from 'openapi-backend';
import type { SurfaceContract } from './contract.ts';

export const REPORT_FILE = new URL('../../.contract-coverage.json', import.meta.url);

export interface OperationCoverage {
  surface: string;
  operationId: string;
  method: string;
  path: string;
  documented: string[];
  exercised: number[];
  /** Documented statuses no test saw (a range such as `4XX` is met by any status in it; `default` by none needed). */
  missing: string[];
}

/**
 * A 409 for a request whose Idempotency-Key is still in flight needs two requests in the database at once: on
 * embedded PGlite, which has one connection, the second waits and gets the replay instead. A run on PGlite does not
 * count that status as a gap; the run on PostgreSQL (CI runs both) must exercise it.
 */
function onlyOnServer(operation: Operation, status: string): boolean {
  const parameters = (operation.parameters ?? []) as Array<{ in?: string; name?: string }>;
  return status === '409' && parameters.some((p) => p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key');
}

export function contractCoverage(
  contracts: SurfaceContract[],
  exercised: Map<string, Map<string, Set<number>>>,
  options: { embeddedDatabase: boolean },
): OperationCoverage[] {
  return contracts.flatMap(({ surface, contract }) =>
    contract.api.router.getOperations().map((operation) => {
      const documented = Object.keys(operation.responses ?? {}).filter(
        (status) => !(options.embeddedDatabase && onlyOnServer(operation, status)),
      );
      const seen = [...(exercised.get(surface)?.get(operation.operationId!) ?? [])].sort((a, b) => a - b);
      const covered = (status: string) =>
        status === 'default' ||
        seen.some((s) => (/^\dXX$/i.test(status) ? String(s)[0] === status[0] : String(s) === status));
      return {
        surface,
        operationId: operation.operationId!,
        method: operation.method.toUpperCase(),
        path: operation.path,
        documented,
        exercised: seen,
        missing: documented.filter((status) => !covered(status)),
      };
    }),
  );
}

export interface EventKindCoverage {
  type: string;
  produced: boolean;
}

export function eventKindCoverage(documented: string[], seen: ReadonlySet<string>): EventKindCoverage[] {
  return documented.map((type) => ({ type, produced: seen.has(type) }));
}

export function writeCoverageReport(rows: OperationCoverage[], events: EventKindCoverage[]): void {
  const gaps = rows.reduce((n, row) => n + row.missing.length, 0) + events.filter((e) => !e.produced).length;
  writeFileSync(
    REPORT_FILE,
    JSON.stringify({ written_at: new Date().toISOString(), gaps, operations: rows, events }, null, 2) + '\n',
  );
}

/** The rows as an aligned text table. */
export function coverageTable(rows: OperationCoverage[]): string {
  const header = ['surface', 'operation', 'documented', 'exercised', 'missing'];
  const lines = rows.map((r) => [
    r.surface,
    r.operationId,
    r.documented.join(' '),
    r.exercised.join(' '),
    r.missing.join(' ') || '—',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n');
}

/** What a run with gaps fails with: each operation and the statuses no test made it answer. */
export function gapMessage(rows: OperationCoverage[], events: EventKindCoverage[] = []): string | undefined {
  const gaps = rows.filter((r) => r.missing.length > 0);
  const unproduced = events.filter((e) => !e.produced).map((e) => e.type);
  if (gaps.length === 0 && unproduced.length === 0) return undefined;
  const statuses =
    gaps.length === 0
      ? []
      : [
          'Documented statuses no test exercised (add tests, or fix the spec if a status cannot happen):',
          ...gaps.map(
            (r) =>
              `  ${r.surface} ${r.operationId} (${r.method} ${r.path}): ${r.missing.join(', ')}${r.exercised.length === 0 ? ' — never exercised at all' : ''}`,
          ),
        ];
  const kinds =
    unproduced.length === 0
      ? []
      : [`Documented webhook event kinds no test produced and checked against the spec: ${unproduced.join(', ')}`];
  return [...statuses, ...kinds].join('\n');
}
