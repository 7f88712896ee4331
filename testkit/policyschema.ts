// The openAPIV3Schema of a policy kind as a CRD serves it, around the part of `spec` a test reaches: for the tests of
// the variant check and rendering (core/variants), which need a kind's schema without reading a real CRD.
import type { OpenApiSchema } from '../src/core/variants/schemacheck.ts';

export function policySchema(spec: OpenApiSchema): OpenApiSchema {
  return { type: 'object', properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec } };
}
