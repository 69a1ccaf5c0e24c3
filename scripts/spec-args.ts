// The value after a command-line flag (`--current file.json`), if the flag is given.
export function option(flag: string, argv: string[] = process.argv): string | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value`);
  return value;
}
