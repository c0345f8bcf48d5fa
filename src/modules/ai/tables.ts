/** Kysely types of this domain's tables (its migration creates them). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AiTables {}
