#!/usr/bin/env bash
# Builds the per-platform npm packages that carry the diagrelay binary
# (docs/pi.md, "The binary"): clients/js/npm/<platform>/{package.json,bin/diagrelay,LICENSE},
# each named as the main package's optionalDependency for that platform,
# with os and cpu set, at the version `diagrelay version` prints (which
# must equal clients/js/package.json's). The one place that sets
# CGO_ENABLED=0 for them. Run from the repository root:
#
#   clients/js/scripts/build-platforms.sh linux-x64   # one platform
#   clients/js/scripts/build-platforms.sh             # all of them
#
# Windows is not built: `diagrelay serve` and its children speak over a Unix
# socket with the peer's kernel credentials (docs/protocol.md, "Bound tokens").
set -euo pipefail
[ -f go.mod ] && [ -d clients/js ] || { echo "build-platforms.sh: run from the repository root" >&2; exit 2; }

all=(linux-x64 linux-arm64 darwin-x64 darwin-arm64)
if [ $# -eq 0 ]; then set -- "${all[@]}"; fi

version=$(go run ./cmd/diagrelay version | awk '{print $2}')
pkgversion=$(node -p 'require("./clients/js/package.json").version')
if [ "$version" != "$pkgversion" ]; then
	echo "build-platforms.sh: diagrelay version is $version but clients/js/package.json says $pkgversion" >&2
	exit 1
fi

for platform in "$@"; do
	case "$platform" in
	linux-x64) goos=linux goarch=amd64 os=linux cpu=x64 ;;
	linux-arm64) goos=linux goarch=arm64 os=linux cpu=arm64 ;;
	darwin-x64) goos=darwin goarch=amd64 os=darwin cpu=x64 ;;
	darwin-arm64) goos=darwin goarch=arm64 os=darwin cpu=arm64 ;;
	*) echo "build-platforms.sh: unknown platform $platform (want one of ${all[*]})" >&2; exit 2 ;;
	esac
	dir=clients/js/npm/$platform
	rm -rf "$dir"
	mkdir -p "$dir/bin"
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -ldflags=-s -o "$dir/bin/diagrelay" ./cmd/diagrelay
	cp LICENSE "$dir/LICENSE"
	cat >"$dir/package.json" <<JSON
{
  "name": "@diagrelay/$platform",
  "version": "$version",
  "description": "The diagrelay binary for $os $cpu, for the npm package diagrelay",
  "license": "MIT",
  "repository": { "type": "git", "url": "git+https://github.com/diagrelay/diagrelay.git", "directory": "clients/js" },
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/diagrelay", "LICENSE"],
  "preferUnplugged": true
}
JSON
	echo "$dir: @diagrelay/$platform@$version"
done
