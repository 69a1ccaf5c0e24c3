// The API surfaces this service serves. Each is one API in redocly.yaml and one folder in spec/ and generated/.
export const surfaces = ['general', 'partner-v1'] as const;
export type Surface = (typeof surfaces)[number];
