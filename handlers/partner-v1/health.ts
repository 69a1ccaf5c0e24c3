import type { PartnerHandlers } from './types.ts';

export const getHealth: PartnerHandlers['getHealth'] = async ({ principal }, { apiVersion }) => ({
  status: 200,
  body: {
    status: 'ok',
    version: apiVersion,
    your_key: principal.prefix,
    rate_limit_per_min: principal.per_minute,
    rate_limit_per_day: principal.per_day,
  },
});
