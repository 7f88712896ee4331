// The defaults a CRD's structural schema gives an object, applied as the apiserver applies them
// (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting, algorithm.go and prunenulls.go): a null
// where the schema does not allow one is dropped, then each absent property with a `default` gets it, and
// the same goes on inside objects, maps (additionalProperties) and list items. `policy-sync diff` uses it so
// that a file compares with the hub policy as the apiserver would store it, without asking the apiserver
// (a dry run is a write request). Pure.

/** What defaulting reads of an OpenAPI v3 schema of a CRD version. */
export interface DefaultingSchema {
  properties?: Record<string, DefaultingSchema>;
  additionalProperties?: DefaultingSchema | boolean;
  items?: DefaultingSchema;
  default?: unknown;
  nullable?: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mapSchema(schema: DefaultingSchema): DefaultingSchema | undefined {
  return isRecord(schema.additionalProperties) ? schema.additionalProperties : undefined;
}

/** `value` with the schema's defaults, as a new value (the input is not changed). */
export function withSchemaDefaults<T>(value: T, schema: DefaultingSchema | undefined): T {
  if (schema === undefined) return value;
  return apply(structuredClone(value), schema) as T;
}

function apply(value: unknown, schema: DefaultingSchema): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return items ? (value as unknown[]).map((v) => apply(v, items)) : value;
  }
  if (!isRecord(value)) return value;
  const properties = schema.properties ?? {};
  const additional = mapSchema(schema);
  // Nulls the schema does not allow are pruned first (prunenulls.go)...
  for (const [key, v] of Object.entries(value)) {
    const s = Object.hasOwn(properties, key) ? properties[key] : additional;
    if (v === null && s !== undefined && !s.nullable && s.default === undefined) delete value[key];
  }
  // ...then absent properties (or a null one not allowed) take their default...
  for (const [key, s] of Object.entries(properties)) {
    if (s.default === undefined) continue;
    if (!Object.hasOwn(value, key) || (value[key] === null && !s.nullable)) value[key] = structuredClone(s.default);
  }
  // ...and the same inside every value, defaults just set included.
  for (const [key, v] of Object.entries(value)) {
    const s = Object.hasOwn(properties, key) ? properties[key] : additional;
    if (s !== undefined) value[key] = apply(v, s);
  }
  return value;
}
