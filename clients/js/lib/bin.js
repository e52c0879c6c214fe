// Where the `diagrelay` binary is: the `bin` option, else DIAGRELAY_BIN,
// else this platform's package (an optionalDependency that npm installs
// only on its os and cpu) or, in a clone of the repository, what
// scripts/build-platforms.sh built for this platform, else `diagrelay` on
// PATH. docs/pi.md ("The binary").

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/** The platforms with a binary package: `${process.platform}-${process.arch}` → package name. */
export const PLATFORM_PACKAGES = Object.freeze({
  "linux-x64": "@diagrelay/linux-x64",
  "linux-arm64": "@diagrelay/linux-arm64",
  "darwin-x64": "@diagrelay/darwin-x64",
  "darwin-arm64": "@diagrelay/darwin-arm64",
});

/**
 * platformBinary returns the binary of this platform's package, or why
 * there is none.
 * @returns {{bin: string} | {missing: string}}
 */
function platformBinary() {
  const key = `${process.platform}-${process.arch}`;
  const name = PLATFORM_PACKAGES[/** @type {keyof typeof PLATFORM_PACKAGES} */ (key)];
  if (!name) return { missing: `no binary package for ${key}` };
  let dir;
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    // A clone of the repository: what scripts/build-platforms.sh built beside the package.
    const built = builtBinary(key);
    if (built) return { bin: built };
    return { missing: `${name} is not installed, nor built in this clone (clients/js/scripts/build-platforms.sh ${key})` };
  }
  const bin = path.join(dir, "bin", "diagrelay");
  if (!fs.existsSync(bin)) return { missing: `${name} has no bin/diagrelay` };
  return { bin };
}

/**
 * builtBinary is the binary scripts/build-platforms.sh built for platform in
 * this package's clone (npm/<platform>/bin/diagrelay; an installed package
 * has no npm/ directory), or null.
 * @param {string} platform
 */
export function builtBinary(platform) {
  const file = fileURLToPath(new URL(`../npm/${platform}/bin/diagrelay`, import.meta.url));
  return fs.existsSync(file) ? file : null;
}

/**
 * onPath returns the first executable `diagrelay` in PATH, or null.
 * @param {string | undefined} PATH
 */
function onPath(PATH) {
  for (const dir of (PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, "diagrelay");
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * findBinary resolves the binary in the order docs/pi.md gives. When none is
 * found it throws an Error (code "ERR_DIAGRELAY_NO_BINARY") that names
 * each place tried and what to install.
 * @param {{bin?: string, env?: NodeJS.ProcessEnv}} [options]
 * @returns {string}
 */
export function findBinary({ bin, env = process.env } = {}) {
  if (bin) return bin;
  if (env.DIAGRELAY_BIN) return env.DIAGRELAY_BIN;
  const pkg = platformBinary();
  if ("bin" in pkg) return pkg.bin;
  const found = onPath(env.PATH);
  if (found) return found;
  const key = `${process.platform}-${process.arch}`;
  const install = PLATFORM_PACKAGES[/** @type {keyof typeof PLATFORM_PACKAGES} */ (key)]
    ? `reinstall diagrelay without --omit=optional (or npm install ${PLATFORM_PACKAGES[/** @type {keyof typeof PLATFORM_PACKAGES} */ (key)]})`
    : "go install github.com/diagrelay/diagrelay/cmd/diagrelay@latest";
  throw Object.assign(
    new Error(
      `diagrelay: no diagrelay binary found; tried the bin option (not given), DIAGRELAY_BIN (not set), ` +
        `the platform package (${pkg.missing}) and PATH (no diagrelay in it). To fix: ${install}, or set DIAGRELAY_BIN`,
    ),
    { code: "ERR_DIAGRELAY_NO_BINARY" },
  );
}
