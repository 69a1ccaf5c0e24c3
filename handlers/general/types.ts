import type { components, operations } from '../../generated/general/types.ts';
import type { QueryDefaults } from '../../generated/general/operations.ts';
import type { SurfaceHandlers } from '../../server/handler-types.ts';
import type { GeneralPrincipal } from '../../server/general/principal.ts';

/** Who calls the general surface: one student, through an access token or a personal key. */
export type GeneralHandlers = SurfaceHandlers<operations, QueryDefaults, GeneralPrincipal>;
export type Schemas = components['schemas'];
