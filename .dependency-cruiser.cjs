// The import rules of the layers (npm run check:imports, and in CI): the entry points (app/, the composition root
// with main.ts and start.mjs; scripts/) → handlers/ → services/ → server/ (the platform: http, contract, auth, oauth,
// limits, process) → db/ → domain/. An import that runs upward, across surfaces or in a circle fails the check, so that
// it is decided as a design question rather than slipped in as a shortcut. Type-only imports count: a type from a
// higher layer couples the code as much as a value does. generated/ sits below everything and is allowed everywhere.
//
// Paths are relative to the folder the check runs in (the repository root). Only project folders are constrained:
// npm packages and node: modules are free, so "imports only X" rules restrict `local` dependencies.

const PLATFORM = '^server/';
// The composition root (app/, with the entry files main.ts and start.mjs) and the command-line scripts: nothing below
// them imports them.
const ENTRY = ['^app/', '^scripts/'];

// The files a process starts from: the service's and the CLI's (app/main.ts and scripts/cli.ts, built and started by
// app/start.mjs) and every file a package.json script runs. They are run, never imported.
const ENTRY_FILES = [
  ...new Set(
    ['app/main.ts', 'scripts/cli.ts', ...Object.values(require('./package.json').scripts).flatMap(filesRun)].map(
      (file) => `^${file.replace(/[.]/g, '[.]')}$`,
    ),
  ),
];
// Shared services are used by many features (tasks, rooms, exams, flashcards…); the features are the other folders.
const SHARED_SERVICES = '^services/(events|streams|readiness|progress|leases)/';

/** The app/ and scripts/ files a package.json command line names. */
function filesRun(command) {
  return [...command.matchAll(/(?:^|\s)((?:app|scripts)\/[\w/.-]+[.](?:ts|mjs))(?=\s|$)/g)].map(([, file]) => file);
}

/** "Imports nothing of the project but these folders": packages and node: modules stay free, and an import of test/
 *  is left to not-to-test, so that it is reported once. */
function onlyTo(allowed) {
  return { dependencyTypes: ['local'], pathNot: [...allowed, '^test/'] };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-imports-only-domain',
      comment: 'domain/ is pure study logic: no HTTP, no SQL, no other layer; only domain/ and the generated types.',
      severity: 'error',
      from: { path: '^domain/' },
      to: onlyTo(['^domain/', '^generated/']),
    },
    {
      name: 'db-imports-only-db-and-domain',
      comment:
        'db/ (queries, migrations, seeds) sits under everything but domain/: it never reaches up into the runtime.',
      severity: 'error',
      from: { path: '^db/' },
      to: onlyTo(['^db/', '^domain/', '^generated/']),
    },
    {
      name: 'platform-imports-only-platform-db-domain',
      comment:
        'server/ is the platform (http, contract, auth, oauth, limits, process) shared by handlers, services and the ' +
        'entry points: it imports only itself, db/, domain/ and generated/ (never services/, handlers/ or an entry).',
      severity: 'error',
      from: { path: PLATFORM },
      to: onlyTo([PLATFORM, '^db/', '^domain/', '^generated/']),
    },
    {
      name: 'services-not-to-handlers-or-entry',
      comment: 'services/ is called by handlers, the CLI and the worker alike, so it never imports any of them.',
      severity: 'error',
      from: { path: '^services/' },
      to: { path: ['^handlers/', ...ENTRY] },
    },
    {
      name: 'services-and-domain-not-to-problems',
      comment:
        'services/ and domain/ refuse with the transport-free errors of domain/errors.ts, which the CLI and the ' +
        'worker read as they are; the edge maps them to problem+json once (server/http/problems.ts problemOf).',
      severity: 'error',
      from: { path: ['^services/', '^domain/'] },
      to: { path: '^server/http/problems[.]ts$' },
    },
    {
      name: 'handlers-not-to-entry',
      comment: 'Handlers are composed by app/ and started by the entry points; they never import them.',
      severity: 'error',
      from: { path: '^handlers/' },
      to: { path: ENTRY },
    },
    {
      name: 'surfaces-apart',
      comment:
        'handlers/general/ and handlers/partner-v1/ never import each other: what both need belongs in services/.',
      severity: 'error',
      from: { path: '^handlers/(general|partner-v1)/' },
      to: { path: '^handlers/(general|partner-v1)/', pathNot: '^handlers/$1/' },
    },
    {
      name: 'cli-calls-services-not-handlers',
      comment:
        'The CLI (scripts/cli.ts, and its commands in app/cli/, which the server runs too) calls services/ and db/ ' +
        'directly, never an HTTP handler.',
      severity: 'error',
      from: { path: '^(scripts/cli[.]ts$|app/cli/)' },
      to: { path: '^handlers/' },
    },
    {
      name: 'sdk-imports-only-sdk',
      comment: 'sdk/ ships to API clients: it imports only itself and the generated types, never the server.',
      severity: 'error',
      from: { path: '^sdk/' },
      to: onlyTo(['^sdk/', '^generated/']),
    },
    {
      name: 'entry-points-apart',
      comment:
        'app/ (the service) and scripts/ (the CLI, bench, generators, docs) are separate programs: the service never ' +
        "imports a tool. What both need lives in a layer below, or in app/'s modules that the tools read (config).",
      severity: 'error',
      from: { path: '^app/' },
      to: { path: '^scripts/' },
    },
    {
      name: 'entry-files-not-imported',
      comment: 'A file a process starts from (app/main.ts, a script package.json runs) is run, never imported.',
      severity: 'error',
      from: {},
      to: { path: ENTRY_FILES },
    },
    {
      name: 'shared-services-not-to-features',
      comment:
        'Shared services (events, streams, readiness, progress, leases) are called by the features; a feature they imported ' +
        'would be reachable from every other feature. A feature hands them what they need as arguments.',
      severity: 'error',
      from: { path: SHARED_SERVICES },
      to: { path: '^services/', pathNot: SHARED_SERVICES },
    },
    {
      name: 'service-folders-no-loop',
      comment:
        'Two service folders that import each other (services/a/* ↔ services/b/*) are one concern in two places: ' +
        'move the shared part down into one of them, or into a folder both import.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^services/[^/]+$' },
      to: { path: '^services/[^/]+$', circular: true },
    },
    {
      name: 'no-circular',
      comment: 'A circle of imports makes its modules one unit in disguise; break it by moving the shared part down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-test',
      comment:
        'Production code never imports test/: what a test helper offers that production needs moves out of test/.',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    {
      name: 'every-import-resolves',
      comment: 'An import the check cannot resolve is an import it cannot judge: it fails rather than pass unseen.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // test/ is not cruised (an import into it is still seen, by not-to-test); generated/ and packages are leaves.
    doNotFollow: { path: ['node_modules', '^generated/', '^test/'] },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    skipAnalysisNotInRules: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
    },
  },
};
