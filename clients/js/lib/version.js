// Semantic versions, as the capability probe compares them: protocol 1 and
// a version at least the caller's minimum (docs/protocol.md).

const SEMVER = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/**
 * parseVersion returns [major, minor, patch, prerelease ids] or null.
 * @param {string} v
 */
export function parseVersion(v) {
  const m = SEMVER.exec(v);
  if (!m) return null;
  return /** @type {const} */ ([Number(m[1]), Number(m[2]), Number(m[3]), m[4] ? m[4].split(".") : []]);
}

/** compareVersions orders two parsed versions as semantic versioning does. */
export function compareVersions(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  const pa = a[3], pb = b[3];
  if (pa.length === 0 || pb.length === 0) return pb.length - pa.length; // a release beats its prereleases
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const na = /^\d+$/.test(pa[i]), nb = /^\d+$/.test(pb[i]);
    if (na && nb && Number(pa[i]) !== Number(pb[i])) return Number(pa[i]) < Number(pb[i]) ? -1 : 1;
    if (na !== nb) return na ? -1 : 1; // numeric identifiers sort first
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}

/**
 * compatible reports whether a probe reply is protocol 1 with a valid
 * version >= min. Anything else, the legacy empty reply included, is not.
 * @param {unknown} cap
 * @param {string} min
 */
export function compatible(cap, min) {
  if (cap === null || typeof cap !== "object") return false;
  const { version, protocol } = /** @type {{version?: unknown, protocol?: unknown}} */ (cap);
  if (protocol !== 1 || typeof version !== "string") return false;
  const v = parseVersion(version), m = parseVersion(min);
  if (!m) throw new TypeError(`minimum version ${JSON.stringify(min)} is not a semantic version`);
  return v !== null && compareVersions(v, m) >= 0;
}
