// Whether this replica may write now: every write path asks (KubeHttp's write guard), so that a leader
// that lost — or can no longer renew — its lease stops writing at once, before a standby can acquire.
// Without leader election every write is allowed; with it, none until a lease is held and renewed.
import { NotLeaderError } from '../kube/http.ts';

export class Leadership {
  private elector: { readonly isLeader: boolean } | undefined;

  constructor(private readonly elected: boolean) {}

  /** The elector whose time-bounded `isLeader` decides from now on. */
  follow(elector: { readonly isLeader: boolean }): void {
    this.elector = elector;
  }

  get canWrite(): boolean {
    if (!this.elected) return true;
    return this.elector?.isLeader ?? false;
  }

  /** A KubeHttp write guard. */
  readonly guard = (method: string, path: string): void => {
    if (!this.canWrite) throw new NotLeaderError(method, path);
  };
}
