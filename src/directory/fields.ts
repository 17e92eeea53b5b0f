/**
 * The fields every version's schemas are made of (schemas.ts for v1/v2, v3/schemas.ts): each
 * only checks, and turning a field into our type happens once per object in its transform,
 * through the small functions here (see schemas.ts on why).
 */
import { z } from 'zod';
import type { AttachedRef } from './types.js';

export const id = z.union([z.string().min(1), z.number().int().nonnegative()]);
export const nullableId = z.union([z.string(), z.number().int().nonnegative()]).nullable().optional();
export const text = z.string().nullable().optional();
/** A status or badge: string, number or null in the wild; '' means none. */
export const openString = z.union([z.string(), z.number(), z.boolean()]).nullable().optional();
export const count = z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/)]);
export const optionalCount = count.nullable().optional();
export const stringList = z
  .array(z.union([z.string(), z.number()]))
  .nullable()
  .optional();
export const attached = z.object({ id: nullableId, approved: z.boolean().optional() }).nullable().optional();

export type Id = z.output<typeof id>;

export const toId = (v: Id): string => String(v);
export const toNullableId = (v: z.output<typeof nullableId>): string | null =>
  v === undefined || v === null || v === '' ? null : String(v);
export const toText = (v: z.output<typeof text>): string | null => v ?? null;
export const toOpenString = (v: z.output<typeof openString>): string | null =>
  v === undefined || v === null || v === '' || v === false ? null : String(v);
export const toCount = (v: z.output<typeof count>): number => (typeof v === 'number' ? v : Number(v));
export const toCountOrZero = (v: z.output<typeof optionalCount>): number =>
  v === undefined || v === null ? 0 : toCount(v);
export const toCountOrNull = (v: z.output<typeof optionalCount>): number | null =>
  v === undefined || v === null ? null : toCount(v);
export const toStringList = (v: z.output<typeof stringList>): string[] => (v ? v.map(String) : []);
export const toAttached = (v: z.output<typeof attached>): AttachedRef | null =>
  v ? { id: toNullableId(v.id), approved: v.approved ?? false } : null;
