// Deep freezing of JSON data shared between readers: one reader must never see another's change.

/** `value` and everything in it frozen (a part frozen already is taken as frozen throughout); returns `value`. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
