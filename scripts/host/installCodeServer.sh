#!/usr/bin/env bash
# Installs what the in-host and UI tests need on a fresh Debian 12 machine whose only reachable registries are npm
# and Debian: Chromium, code-server's build dependencies, and code-server 4.100.3 (the newest on Node 20) from npm,
# into a cache folder outside the extension's node_modules. A fast no-op when everything is already there.
#   scripts/host/installCodeServer.sh            install (or confirm) into .cache/code-server
#   CODE_SERVER_HOME=/some/dir scripts/host/...   install elsewhere
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
VERSION=4.100.3
DEST=${CODE_SERVER_HOME:-$root/.cache/code-server}/$VERSION
BIN=$DEST/node_modules/.bin/code-server

need=""
for p in chromium build-essential python3 pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev ripgrep curl; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
  echo "installing Debian packages:$need"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi

if [ -x "$BIN" ] && [ -x "$DEST/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ]; then
  echo "code-server $VERSION already installed in $DEST"
  exit 0
fi

# @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache already holds the archive; seed the cache
# with Debian's rg. Package version, tag and target belong to code-server 4.100.x's @vscode/ripgrep 1.15.11.
RG_PKG=1.15.11 RG_TAG=v13.0.0-10 RG_TARGET=x86_64-unknown-linux-musl
cache_dir=${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RG_PKG
seed=$(mktemp -d)
cp "$(command -v rg)" "$seed/rg"
mkdir -p "$cache_dir"
tar czf "$cache_dir/ripgrep-$RG_TAG-$RG_TARGET.tar.gz" -C "$seed" rg
rm -rf "$seed"

echo "installing code-server $VERSION into $DEST (about 2 minutes on 2 cores)"
rm -rf "$DEST"
mkdir -p "$DEST"
cd "$DEST"
echo '{"name":"code-server-host","private":true}' > package.json
# unsafe_perm: code-server's postinstall refuses to run as root without it. yes: node-pty's postinstall calls npx,
# which must not prompt. nodedir: node-gyp uses the local Node headers instead of downloading them.
npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=${npm_config_nodedir:-/usr} \
  npm install --no-audit --no-fund --loglevel=error "code-server@$VERSION" >"$DEST/install.log" 2>&1 ||
  { echo "code-server install failed; log:"; tail -50 "$DEST/install.log"; exit 1; }
test -x node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg
t=$(mktemp -d)
XDG_CONFIG_HOME=$t XDG_DATA_HOME=$t XDG_CACHE_HOME=$t "$BIN" --version | grep -m1 "$VERSION"
rm -rf "$t"
