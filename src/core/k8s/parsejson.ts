// Reading back JSON we wrote into an annotation: parsed and checked against a schema, undefined when
// absent or not what we expect (someone edited it) — callers then treat it as missing.
import type { z } from 'zod';

export function parseJson<S extends z.ZodType>(text: string | undefined, schema: S): z.infer<S> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
