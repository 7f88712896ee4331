// The configuration in force for each owned GatewayClass: what the class reconciler decided and the
// policy syncer reads. Invalid params keep the last valid configuration (DESIGN §2.2): a class whose
// params were never valid since start-up has no configuration, and while any owned class is in that state
// nothing may be deleted for a kind that is not watched (its params may well list it).
import { canonicalJson } from '../core/canonical.ts';
import { gvrKey, type GroupVersionResource } from '../core/gvr.ts';
import type { PolicyKindConfig, SyncParams } from '../core/params.ts';
import type { WatchedKind } from '../kube/dynamicinformers.ts';

export interface KindInForce extends WatchedKind {
  config: PolicyKindConfig;
}

export interface ClassConfig {
  params: SyncParams;
  /** The valid policy kinds of the params, by gvrKey. */
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

  get(className: string): ClassConfig | undefined {
    return this.states.get(className)?.config;
  }



  /** The kind as configured for the class, if the class is owned and lists it validly. */
  kind(className: string, gvr: GroupVersionResource): KindInForce | undefined {
    return this.states.get(className)?.config?.kinds.get(gvrKey(gvr));
  }

  /** The union of the kinds in force over all owned classes. */
  wantedKinds(): WatchedKind[] {
    const kinds = new Map<string, WatchedKind>();
    for (const s of this.states.values()) {
      for (const [key, k] of s.config?.kinds ?? []) kinds.set(key, { gvr: k.gvr, namespaced: k.namespaced });
    }
    return [...kinds.values()];
  }

  /**
   * Every owned class (as the GatewayClass cache lists them) has a configuration in force: only then is
   * an unwatched kind really unwanted.
   */
  completeFor(ownedClassNames: string[]): boolean {
    return ownedClassNames.every((name) => this.states.get(name)?.config !== undefined);
  }
}

function fingerprint(config: ClassConfig): string {
  return canonicalJson({ params: config.params, kinds: [...config.kinds.keys()].sort() });
}
