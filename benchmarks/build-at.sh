#!/usr/bin/env bash
# Builds etcd-effect as it was at a commit, for a before/after benchmark (bench:checksum):
#
#   bash benchmarks/build-at.sh <commit>    # prints the tree's directory; its dist/cli/main.js is the program
#
# The commit's files (git archive) go to $XDG_CACHE_HOME/etcd-effect/builds/<commit>, with this
# tree's node_modules linked in, and `npm run build` there; a finished build is reused as it is.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$here" rev-parse --short=12 "${1:?usage: build-at.sh <commit>}^{commit}")
dir=${XDG_CACHE_HOME:-$HOME/.cache}/etcd-effect/builds/$commit
if [ -f "$dir/.built" ]; then
  echo "$dir"
  exit 0
fi
rm -rf "$dir" "$dir.tmp"
mkdir -p "$dir.tmp"
git -C "$here" archive "$commit" | tar -x -C "$dir.tmp"
ln -s "$here/node_modules" "$dir.tmp/node_modules"
(cd "$dir.tmp" && npm run -s build >&2)
touch "$dir.tmp/.built"
mv "$dir.tmp" "$dir"
echo "$dir"
