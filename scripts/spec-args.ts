import { surfaces, type Surface } from '../server/contract/surfaces.ts';

// The value after a command-line flag (`--current file.json`), if the flag is given.
export function option(flag: string, argv: string[] = process.argv): string | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value`);
  return value;
}

/** `--surface general|partner-v1`; partner v1 when absent, the surface these scripts first locked. */
export function surfaceOption(argv: string[] = process.argv): Surface {
  const value = option('--surface', argv) ?? 'partner-v1';
  if (!surfaces.includes(value as Surface))
    throw new Error(`--surface must be one of ${surfaces.join(', ')}, got ${value}`);
  return value as Surface;
}
