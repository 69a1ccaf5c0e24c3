// The general surface's authentication challenge (RFC 6750), apart from scopes.ts so that the problem catalogue
// (server/http/problems.ts), which scopes.ts uses, can name it in the refusals it maps.
export const REALM = 'Bearer realm="general"';
