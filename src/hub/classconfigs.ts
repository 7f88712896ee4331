// The configuration in force for each owned GatewayClass: what the class reconciler decided and the
// policy reconciler reads. Invalid params keep the last valid configuration (docs/design/configuration.md#params-validation); a class whose
// params were never valid since start-up has none and is *unknown* — the deletion rule (core/removal.ts)
// then keeps every work that might be its. Kinds are keyed by group+resource, never version.
import { canonicalJson } from '../core/k8s/canonical.ts';
import { groupResourceKey, type GroupResource } from '../core/k8s/gvr.ts';
import type { PolicyKindConfig, SyncParams } from '../core/params/params.ts';
import type { OpenApiSchema } from '../core/variants/schemacheck.ts';
import type { ClassKnowledge } from '../core/works/removal.ts';
import type { WatchedKind } from '../kube/dynamicinformers.ts';

export interface KindInForce extends WatchedKind {
  config: PolicyKindConfig;
  /** metadata.uid of the kind's CRD when it was validated; undefined for built-in resources. */
  crdUid?: string;
  /** The validated version of the kind's CRD has the status subresource; undefined for built-in resources. */
  statusSubresource?: boolean;
  /** That version's openAPIV3Schema, as served when it was validated (variants are checked by it). */
  schema?: OpenApiSchema;
}

export interface ClassConfig {
  params: SyncParams;
  /** The policy kinds in force (validated now, or kept from the last good check), by groupResourceKey. */
  kinds: Map<string, KindInForce>;
}

interface ClassState {
  config?: ClassConfig;
  /** The params as last read were valid. */
  valid: boolean;
}

export class ClassConfigs {
  private readonly states = new Map<string, ClassState>();

  /** Records a valid configuration; returns true when what is in force changed. */
  setValid(className: string, config: ClassConfig): boolean {
    const before = this.states.get(className)?.config;
    this.states.set(className, { config, valid: true });
    return before === undefined || fingerprint(before) !== fingerprint(config);
  }

  /** Records that the class's params are invalid; the last valid configuration stays in force. */
  setInvalid(className: string): { keepingLastGood: boolean } {
    const config = this.states.get(className)?.config;
    this.states.set(className, { config, valid: false });
    return { keepingLastGood: config !== undefined };
  }

  /** The class is not ours (any more); returns true when it had a configuration. */
  remove(className: string): boolean {
    const had = this.states.get(className)?.config !== undefined;
    this.states.delete(className);
    return had;
  }

  /** The class's params were read since start-up — valid or not: what is in force for it is known. */
  paramsRead(className: string): boolean {
    return this.states.has(className);
  }

  get(className: string): ClassConfig | undefined {
    return this.states.get(className)?.config;
  }

  /** The kind as configured for the class, if the class is owned and has it in force. */
  kind(className: string, gr: GroupResource): KindInForce | undefined {
    return this.states.get(className)?.config?.kinds.get(groupResourceKey(gr));
  }

  /**
   * The kinds to watch: the union of the kinds in force over all classes, one per group+resource. Two
   * classes naming different versions of one resource watch the version of the first class by name.
   */
  kindsToWatch(): WatchedKind[] {
    const kinds = new Map<string, WatchedKind>();
    for (const [, s] of [...this.states].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      for (const [key, k] of s.config?.kinds ?? []) if (!kinds.has(key)) kinds.set(key, { gvr: k.gvr, namespaced: k.namespaced });
    }
    return [...kinds.values()];
  }

  /** The downstreamNamespace templates of every configuration in force. */
  downstreamTemplates(): Set<string> {
    return new Set([...this.states.values()].flatMap((s) => (s.config ? [s.config.params.downstreamNamespace] : [])));
  }

  /** The CRD uid a kind was validated under (any class's; they read the same CRD). */
  crdUid(gr: GroupResource): string | undefined {
    const key = groupResourceKey(gr);
    for (const s of this.states.values()) {
      const uid = s.config?.kinds.get(key)?.crdUid;
      if (uid !== undefined) return uid;
    }
    return undefined;
  }

  /** The kind's schema as validated (any class's: they read the same CRD); undefined when none was read. */
  schema(gr: GroupResource): OpenApiSchema | undefined {
    const key = groupResourceKey(gr);
    for (const s of this.states.values()) {
      const schema = s.config?.kinds.get(key)?.schema;
      if (schema !== undefined) return schema;
    }
    return undefined;
  }

  /**
   * The kind's status is a subresource (its CRD says so, as every class validated it): a copy may then be
   * applied whole by the work agent without touching its status (core/works/manifestwork.ts copyUpdateStrategy).
   */
  statusSubresource(gr: GroupResource): boolean {
    const key = groupResourceKey(gr);
    const seen = [...this.states.values()].flatMap((s) => {
      const kind = s.config?.kinds.get(key);
      return kind ? [kind.statusSubresource === true] : [];
    });
    return seen.length > 0 && seen.every(Boolean);
  }

  /** What is known of each owned class's configuration, for the deletion rule. */
  knowledge(ownedClassNames: readonly string[]): Map<string, ClassKnowledge> {
    return new Map(
      ownedClassNames.map((name): [string, ClassKnowledge] => {
        const s = this.states.get(name);
        if (!s?.config) return [name, { state: 'unknown', listed: new Set(), synced: new Set() }];
        return [
          name,
          {
            state: s.valid ? 'inForce' : 'lastKnownGood',
            listed: new Set(s.config.params.policiesToSync.map(groupResourceKey)),
            synced: new Set(s.config.kinds.keys()),
          },
        ];
      }),
    );
  }

  /** Every owned class (as the GatewayClass cache lists them) has a configuration in force. */
  completeFor(ownedClassNames: readonly string[]): boolean {
    return ownedClassNames.every((name) => this.states.get(name)?.config !== undefined);
  }
}

function fingerprint(config: ClassConfig): string {
  return canonicalJson({ params: config.params, kinds: [...config.kinds.values()].map((k) => ({ ...k.config, crdUid: k.crdUid ?? null, statusSubresource: k.statusSubresource ?? null, schema: k.schema ?? null })) });
}
