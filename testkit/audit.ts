// Reads a sandbox apiserver's audit log (testkit/sandbox: writes only, Metadata level): which client wrote
// what, and how the apiserver answered. The fault tests use it to name the client behind a deletion
// instead of only counting DELETEs.
import { existsSync, statSync } from 'node:fs';
import { appendedSince } from './appended.ts';
import { auditLogPath, type Sandbox } from './sandbox/sandbox.ts';

export interface AuditedWrite {
  verb: string;
  user: string;
  userAgent: string;
  resource: string;
  namespace?: string;
  name?: string;
  code: number;
  at: string;
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code?: number };
  stageTimestamp?: string;
}

/** A position in one cluster's audit log; `since()` returns the writes logged after it. */
export class AuditCursor {
  private constructor(
    private readonly path: string,
    private offset: number,
  ) {}

  static at(sandbox: Sandbox, cluster: string): AuditCursor {
    const path = auditLogPath(sandbox.layout, cluster);
    if (!existsSync(path)) throw new Error(`no audit log at ${path}: the sandbox was laid out before audit logging; recreate it (local-down --purge)`);
    return new AuditCursor(path, statSync(path).size);
  }

  since(): AuditedWrite[] {
    return parseAudit(appendedSince(this.path, this.offset).text);
  }

  /** The writes since the cursor was made or last advanced, moving it past them (a line still being written stays). */
  advance(): AuditedWrite[] {
    const { text } = appendedSince(this.path, this.offset);
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    this.offset += Buffer.byteLength(complete);
    return parseAudit(complete);
  }
}

function parseAudit(text: string): AuditedWrite[] {
  const writes: AuditedWrite[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // a line being written as we read
    }
    if (e.stage !== 'ResponseComplete' || !e.verb || !e.objectRef?.resource) continue;
    writes.push({
      verb: e.verb,
      user: e.user?.username ?? '',
      userAgent: e.userAgent ?? '',
      resource: e.objectRef.subresource ? `${e.objectRef.resource}/${e.objectRef.subresource}` : e.objectRef.resource,
      ...(e.objectRef.namespace ? { namespace: e.objectRef.namespace } : {}),
      ...(e.objectRef.name ? { name: e.objectRef.name } : {}),
      code: e.responseStatus?.code ?? 0,
      at: e.stageTimestamp ?? '',
    });
  }
  return writes;
}

export function describeWrite(w: AuditedWrite): string {
  return `${w.at} ${w.verb} ${w.resource} ${w.namespace ?? ''}/${w.name ?? ''} → ${w.code} by ${w.user} (${w.userAgent})`;
}
