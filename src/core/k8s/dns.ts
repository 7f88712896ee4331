// Kubernetes name rules (apimachinery validation), used for namespaces, resources and work names.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** A DNS-1123 label: what a namespace name must be. */
export function isDns1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX_LENGTH && DNS1123_LABEL.test(value);
}

/** A DNS-1123 subdomain: dot-separated labels, at most 253 characters (object names, API groups). */
export function isDns1123Subdomain(value: string): boolean {
  if (value.length === 0 || value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) return false;
  return value.split('.').every((part) => DNS1123_LABEL.test(part));
}
