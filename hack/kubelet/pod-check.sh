#!/usr/bin/env bash
# hack/kubelet/pod-check.sh — run the policy-sync image as real pods on the experiment node (node-up.sh, then
# load-image.sh) and report what works: a one-shot `--version` pod, a long-running `hub` pod that talks to the
# apiserver with its projected service-account token and answers liveness/readiness probes on a hostNetwork
# port, and a pod without hostNetwork (to see what "network not ready" does to it). Prints timings.
#
# Why it creates what it does: the sandbox apiserver runs with the ServiceAccount admission plugin disabled
# and no service-account or root-CA-publisher controllers, so nothing makes a ServiceAccount, the
# kube-root-ca.crt ConfigMap or the pod's token volume: this script creates the ServiceAccount and the ConfigMap
# and writes the projected volume into the pod spec explicitly (what the admission plugin would add). The
# apiserver does sign tokens (--service-account-signing-key-file), and the kubelet asks for them by TokenRequest.
# The ServiceAccount is bound to cluster-admin: an experiment, not the chart's RBAC. Pods are hostNetwork with
# probes on 127.0.0.1 (a hostNetwork pod's IP is the node's InternalIP, the host's eth0, which we keep out of it).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
KC="$KL_STATE/kubelet.kubeconfig"
K=("$KL_KUBECTL" --kubeconfig "$KC")
NS="${NS:-kubelet-exp}"
IMAGE="${IMAGE:-localhost/policy-sync:dev}"
server="$(sed -n 's/^ *server: *//p' "$KC" | head -1)"; api_host="${server#https://}"; api_port="${api_host##*:}"; api_host="${api_host%:*}"
now() { date +%s.%N; }
since() { python3 -c "print(round($(now)-$1,2))"; }
# wait_for POD JSONPATH VALUE TIMEOUT: poll until the pod's field equals VALUE; prints the seconds waited.
wait_for() {
  local t0; t0=$(now)
  for _ in $(seq $(($4 * 4))); do
    [[ "$("${K[@]}" -n "$NS" get pod "$1" -o jsonpath="$2" 2>/dev/null)" == "$3" ]] && { since "$t0"; return 0; }
    sleep 0.25
  done
  echo "timeout"; return 1
}
secctx='{"runAsNonRoot": true, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false,
         "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}'

"${K[@]}" create namespace "$NS" --dry-run=client -o yaml | "${K[@]}" apply -f - >/dev/null
"${K[@]}" -n "$NS" create serviceaccount policy-sync --dry-run=client -o yaml | "${K[@]}" apply -f - >/dev/null
"${K[@]}" -n "$NS" create configmap kube-root-ca.crt --from-file=ca.crt="$KL_STATE/client-ca.crt" --dry-run=client -o yaml | "${K[@]}" apply -f - >/dev/null
"${K[@]}" create clusterrolebinding "$NS-policy-sync" --clusterrole=cluster-admin --serviceaccount="$NS:policy-sync" --dry-run=client -o yaml | "${K[@]}" apply -f - >/dev/null
"${K[@]}" -n "$NS" delete pod --all --wait=true --timeout=60s >/dev/null 2>&1 || true

echo "== 1. one-shot pod: --version"
t0=$(now)
"${K[@]}" -n "$NS" apply -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "version"},
 "spec": {"nodeName": "$KL_NODE", "hostNetwork": true, "restartPolicy": "Never", "automountServiceAccountToken": false,
  "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 1000},
  "containers": [{"name": "policy-sync", "image": "$IMAGE", "imagePullPolicy": "Never", "args": ["--version"],
   "securityContext": $secctx, "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}}]}}
JSON
echo "create -> Succeeded: $(wait_for version '{.status.phase}' Succeeded 120 || true) s (total $(since "$t0") s)"
"${K[@]}" -n "$NS" get pod version -o jsonpath='phase={.status.phase} exit={.status.containerStatuses[0].state.terminated.exitCode} reason={.status.containerStatuses[0].state.terminated.reason}{"\n"}' || true
echo "-- kubectl logs version:"; "${K[@]}" -n "$NS" logs version 2>&1 | head -5 || true
echo "-- the container log file, read on the node:"; cat "$KL_STATE"/pod-logs/"$NS"_version_*/policy-sync/0.log 2>&1 | head -3 || true

echo "== 2. long-running pod: hub, in-cluster credentials from a projected token, probes on 127.0.0.1"
HP="$(free_port)"; MP="$(free_port)"
t0=$(now)
"${K[@]}" -n "$NS" apply -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hub"},
 "spec": {"nodeName": "$KL_NODE", "hostNetwork": true, "serviceAccountName": "policy-sync", "automountServiceAccountToken": false,
  "terminationGracePeriodSeconds": 10,
  "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 1000},
  "containers": [{"name": "hub", "image": "$IMAGE", "imagePullPolicy": "Never",
   "args": ["hub", "--health-probe-bind-address=127.0.0.1:$HP", "--metrics-bind-address=127.0.0.1:$MP"],
   "env": [{"name": "KUBERNETES_SERVICE_HOST", "value": "$api_host"}, {"name": "KUBERNETES_SERVICE_PORT", "value": "$api_port"}],
   "securityContext": $secctx, "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
   "volumeMounts": [{"name": "sa", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
   "startupProbe": {"httpGet": {"host": "127.0.0.1", "port": $HP, "path": "/healthz"}, "periodSeconds": 1, "failureThreshold": 120},
   "livenessProbe": {"httpGet": {"host": "127.0.0.1", "port": $HP, "path": "/healthz"}, "periodSeconds": 5},
   "readinessProbe": {"httpGet": {"host": "127.0.0.1", "port": $HP, "path": "/readyz"}, "periodSeconds": 2}}],
  "volumes": [{"name": "sa", "projected": {"sources": [
    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}]}}
JSON
echo "create -> Running: $(wait_for hub '{.status.phase}' Running 120 || true) s"
echo "create -> Ready:   $(wait_for hub '{.status.conditions[?(@.type=="Ready")].status}' True 180 || true) s (total $(since "$t0") s)"
"${K[@]}" -n "$NS" get pod hub -o wide || true
"${K[@]}" -n "$NS" get pod hub -o jsonpath='podIP={.status.podIP} restarts={.status.containerStatuses[0].restartCount} ready={.status.containerStatuses[0].ready} started={.status.containerStatuses[0].started}{"\n"}' || true
echo "-- probe endpoint from the host: /healthz $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/healthz" || true), /readyz $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/readyz" || true)"
echo "-- kubectl logs hub (last 3):"; "${K[@]}" -n "$NS" logs hub --tail=3 2>&1 | cut -c1-300 || true
echo "-- the container log file (last 3):"; tail -3 "$KL_STATE"/pod-logs/"$NS"_hub_*/hub/0.log 2>&1 | cut -c1-300 || true
uid="$("${K[@]}" -n "$NS" get pod hub -o jsonpath='{.metadata.uid}')"
vol="$KL_KUBELET_DIR/pods/$uid/volumes/kubernetes.io~projected/sa"
echo "-- projected volume (inside the node's mount namespace): $(in_ns sh -c "ls $vol | tr '\n' ' '; grep ' $vol ' /proc/self/mountinfo | awk '{print \$9}'" 2>&1)"
in_ns cat "$vol/token" 2>/dev/null | python3 -c '
import base64, json, sys, time
t = sys.stdin.read().strip()
if not t: print("   no token"); sys.exit()
p = t.split(".")[1]; c = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
print("   token: iss=%s sub=%s aud=%s expires in %ds, bound to pod %s" % (c["iss"], c["sub"], c.get("aud"), c["exp"]-time.time(), c.get("kubernetes.io",{}).get("pod",{}).get("name")))' || true
echo "-- the apiserver sees the hub's requests as: $("${K[@]}" -n "$NS" get events --field-selector involvedObject.name=hub -o jsonpath='{range .items[*]}{.reason} {end}' 2>/dev/null)"

echo "== 3. pod without hostNetwork (node network not ready)"
"${K[@]}" -n "$NS" apply -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "podnet"},
 "spec": {"nodeName": "$KL_NODE", "restartPolicy": "Never", "automountServiceAccountToken": false,
  "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 1000},
  "containers": [{"name": "c", "image": "$IMAGE", "imagePullPolicy": "Never", "args": ["--version"], "securityContext": $secctx}]}}
JSON
sleep 8
"${K[@]}" -n "$NS" get pod podnet -o jsonpath='phase={.status.phase} {range .status.containerStatuses[*]}{.state}{end}{"\n"}' || true
"${K[@]}" -n "$NS" get events --field-selector involvedObject.name=podnet -o jsonpath='{range .items[*]}{.type} {.reason}: {.message}{"\n"}{end}' | cut -c1-300 || true
echo "== memory (RSS, MiB)"
for n in kubelet containerd; do echo "$n: $(ps -o rss= -p "$(cat "$KL_PIDS/$n.pid")" | awk '{printf "%.1f", $1/1024}')"; done
hp="$(cat "$KL_PIDS/holder.pid")"; ns="$(readlink "/proc/$hp/ns/mnt")"
for d in /proc/[0-9]*; do [[ "$(readlink "$d/ns/mnt" 2>/dev/null)" == "$ns" ]] || continue
  c="$(tr '\0' ' ' <"$d/cmdline" | cut -c1-50)"; [[ "$c" == *containerd-shim* ]] && echo "shim ${d#/proc/}: $(awk '/VmRSS/ {printf "%.1f", $2/1024}' "$d/status")"; done
for p in $(find /sys/fs/cgroup/memory/"${KL_CGROUP_ROOT#/}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
  echo "pod process $p ($(tr '\0' ' ' </proc/"$p"/cmdline | cut -c1-40)): $(awk '/VmRSS/ {printf "%.1f", $2/1024}' /proc/"$p"/status)"; done
