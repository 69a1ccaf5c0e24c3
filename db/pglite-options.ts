// PGlite's settings, apart from connect.ts so that db/pglite-template.ts can key its template on them.
// PostgreSQL's defaults size a server's shared memory (shared_buffers 128 MB, wal_buffers 4 MB); inside PGlite that
// memory is the process's own. The embedded database holds megabytes, so 16 MB of buffers still keep all of it.
export const PGLITE_CONF = ['shared_buffers=16MB', 'wal_buffers=1MB', 'maintenance_work_mem=16MB'];
