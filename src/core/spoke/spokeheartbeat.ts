// The spoke agent's heartbeat (docs/design/tenancy.md#reports-are-evidence-not-orders): a small ConfigMap the
// agent rewrites every interval, naming the digest of the report it vouches for. Freshness is apart from
// content: the report (spokereport.ts) is rewritten only when what it says changes, and each heartbeat
// costs the hub one small status write of its own ManifestWork (spokeconfig.ts), not a rewrite of the
// report's. The hub counts a version 3 report only while a fresh heartbeat names the digest of the very
// text it holds: a heartbeat naming another one says the hub's copy is behind the spoke. Pure.
import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../k8s/canonical.ts';
import { kubeTimeMillis } from '../k8s/kubetime.ts';

/** The heartbeat ConfigMap's name: beside the spoke configuration ConfigMap, named after it. */
export function spokeHeartbeatName(configMapName: string): string {
  return `${configMapName}-heartbeat`;
}
/** Its data key, and the name of the feedback value that carries it to the hub. */
export const SPOKE_HEARTBEAT_KEY = 'heartbeat';
/** A heartbeat's text is a few dozen bytes; past this it is refused unread. */
const HEARTBEAT_MAX_BYTES = 256;

export interface SpokeHeartbeat {
  /** When the agent wrote it, on the spoke's clock: only ever compared with the previous one. */
  heartbeat: string;
  /** The digest (reportDigest) of the report text the agent last wrote. */
  report: string;
}

/** The digest a heartbeat names a report by: SHA-256 of its text as written, in hex. */
export function reportDigest(reportText: string): string {
  return sha256Hex(reportText);
}

export function serializeSpokeHeartbeat(heartbeat: SpokeHeartbeat): string {
  return canonicalJson({ heartbeat: heartbeat.heartbeat, report: heartbeat.report });
}

const heartbeatSchema = z.strictObject({
  heartbeat: z.string().max(64, 'must be an RFC 3339 time').refine((s) => kubeTimeMillis(s) !== undefined, 'must be an RFC 3339 time'),
  report: z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 digest in hex'),
});

/** The heartbeat read back, or what is wrong with it (bounded: it goes to logs and to the hub's status). */
export function parseSpokeHeartbeat(text: string): { ok: true; heartbeat: SpokeHeartbeat } | { ok: false; message: string } {
  if (text.length > HEARTBEAT_MAX_BYTES) return { ok: false, message: `over ${HEARTBEAT_MAX_BYTES} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: 'not JSON' };
  }
  const parsed = heartbeatSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.code === 'unrecognized_keys' ? String(issue.keys[0] ?? '').slice(0, 64).replace(/[^\x20-\x7e]/g, '?') : issue?.path.join('.');
    const message = issue?.code === 'unrecognized_keys' ? 'unknown field' : (issue?.message ?? 'invalid');
    return { ok: false, message: field ? `${field}: ${message}` : message };
  }
  return { ok: true, heartbeat: parsed.data };
}
