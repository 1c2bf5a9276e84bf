#!/usr/bin/env bash
# Packs built binaries with every shared library they load, the dynamic loader included, into
# OUT_DIR so they run on a machine without Debian's packages (e.g. the 16-core benchmark host):
#   scripts/bundle.sh build/release OUT_DIR
# OUT_DIR/<name> is a wrapper that execs the real binary through the bundled loader (same PID).
# Debian's Abseil ships only shared libraries to CMake, so a fully static link is not an option.
set -euo pipefail
build=${1:?usage: scripts/bundle.sh BUILD_DIR OUT_DIR}
out=${2:?usage: scripts/bundle.sh BUILD_DIR OUT_DIR}
mkdir -p "$out/lib" "$out/bin"
for name in onepassd onepass-load onepass-reference; do
  binary=$(find "$build" -type f -name "$name" -perm -u+x | head -n1)
  [ -n "$binary" ] || { echo "bundle: $name not found under $build; build it first" >&2; exit 1; }
  cp "$binary" "$out/bin/$name"
  ldd "$binary" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
    cp -L "$lib" "$out/lib/"
  done
  cat > "$out/$name" <<WRAP
#!/bin/sh
here=\$(cd "\$(dirname "\$0")" && pwd)
exec "\$here/lib/ld-linux-x86-64.so.2" --library-path "\$here/lib" "\$here/bin/$name" "\$@"
WRAP
  chmod +x "$out/$name"
done
du -sh "$out"
