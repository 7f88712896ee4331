// What the controller needs of a kubeconfig: where the apiserver is and how to authenticate to it. A
// structural subset of client-node's KubeConfig, so that one still fits (tests and hack/ build those).
import type { RequestOptions } from 'node:https';

/** The current cluster's connection settings. */
export interface KubeCluster {
  readonly server: string;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
}

/** A loaded kubeconfig as KubeHttp uses it. */
export interface KubeAccess {
  getCurrentCluster(): KubeCluster | null;
  /** Sets CA, client certificate/key, auth headers and TLS verification for the current context. */
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}
