// The study rooms' bounds, documented in docs/limits.md and the spec: few enough that a room's member list and a
// student's room list are one small read each, and that a focus session's finish credits a bounded number of students.

/** Rooms one student owns at most (409 room_limit_reached). */
export const MAX_ROOMS_OWNED = 10;
/** Rooms one student is a member of at most, their own included (409 room_join_limit_reached). */
export const MAX_ROOMS_JOINED = 30;
/** Members one room has at most, its owner included (409 room_full). */
export const MAX_ROOM_MEMBERS = 30;
