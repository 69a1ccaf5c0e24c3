// npm run mock — serves every generated surface from the spec's examples on MOCK_PORT (default 4010), for client
// teams building before the backend ships a change. See scripts/mock/app.ts for what it checks and how
// `Prefer: code=…, example=…` picks another documented response.
import { createLogger } from '../server/process/logger.ts';
import { createMockApp } from './mock/app.ts';

const port = Number(process.env.MOCK_PORT ?? 4010);
const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
const { app, surfaces } = await createMockApp(logger);
const server = app.listen(port, () => {
  const served = surfaces
    .map(({ surface, contract }) => `${surface} (${contract.api.router.getOperations().length} operations)`)
    .join(', ');
  logger.info(`mock server listening on http://localhost:${port}: ${served}`);
});
server.on('error', (error) => {
  logger.error({ err: error }, 'mock server failed to start');
  process.exit(1);
});
