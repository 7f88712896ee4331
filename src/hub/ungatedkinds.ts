// The synced kinds a Progressive rollout cannot gate on (docs/design/rollout.md#rolling-out-a-change): their CRD
// (the version synced) has none of the fields where a controller says which generation it observed, so no
// verdict is ever known to be about the revision a cluster runs, and every cluster fails at progressDeadline.
// The class reconciler records them per class as it validates the kinds (its PoliciesSynced check reads the
// CRD already); the rollouts read them to name such a kind on a policy whose annotation selects Progressive.
// The kind is still synced: this only says what a Progressive rollout of it will do.

export interface UngatedKind {
  /** `apiVersion` of the kind's objects (`group/version`), as a cached policy carries it. */
  apiVersion: string;
  /** The Kind, as discovery serves it. */
  kind: string;
  /** `resource.version.group`, as the class's conditions name a kind. */
  name: string;
}

export class UngatedKinds {
  private readonly byClass = new Map<string, readonly UngatedKind[]>();

  /** The class's kinds in force that cannot be gated on, as its last validation found them; true when that changed. */
  set(className: string, kinds: readonly UngatedKind[]): boolean {
    const text = (list: readonly UngatedKind[] | undefined): string => JSON.stringify((list ?? []).map((k) => k.name).sort());
    const changed = text(this.byClass.get(className)) !== text(kinds);
    if (kinds.length === 0) this.byClass.delete(className);
    else this.byClass.set(className, kinds);
    return changed;
  }

  /** The class is not ours (any more). */
  remove(className: string): void {
    this.byClass.delete(className);
  }

  /** The kind of objects of `apiVersion` and `kind`, when a class found it cannot be gated on. */
  find(apiVersion: string | undefined, kind: string | undefined): UngatedKind | undefined {
    if (apiVersion === undefined || kind === undefined) return undefined;
    for (const kinds of this.byClass.values()) {
      const found = kinds.find((k) => k.apiVersion === apiVersion && k.kind === kind);
      if (found) return found;
    }
    return undefined;
  }
}
