#!/usr/bin/env bash
# Packs built binaries with every shared library they load, the dynamic loader included, into
# OUT_DIR so they run on a machine without Debian's packages (e.g. the 16-core benchmark host):
#   scripts/bundle.sh build/release OUT_DIR [TOOL...]
# OUT_DIR/<name> is a wrapper that execs the real binary through the bundled loader (same PID).
# Each TOOL (a command on this machine's PATH: nsd, dnsdist, kdig, ip ...) is packed the same
# way into OUT_DIR/tools/<tool>: append that folder to PATH on the other machine, so that its
# own tools win and the bundled ones fill in what it lacks (loadtest/device-bench.sh does).
# Debian's Abseil ships only shared libraries to CMake, so a fully static link is not an option.
set -euo pipefail
build=${1:?usage: scripts/bundle.sh BUILD_DIR OUT_DIR [TOOL...]}
out=${2:?usage: scripts/bundle.sh BUILD_DIR OUT_DIR [TOOL...]}
shift 2
mkdir -p "$out/lib" "$out/bin" "$out/tools"

# pack BINARY WRAPPER: BINARY into $out/bin, its libraries into $out/lib, WRAPPER execs it.
pack() {
  local binary=$1 wrapper=$2 name lib
  name=$(basename "$binary")
  cp "$binary" "$out/bin/$name"
  ldd "$binary" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
    cp -L "$lib" "$out/lib/"
  done
  cat > "$wrapper" <<WRAP
#!/bin/sh
here=\$(cd "\$(dirname "\$0")" && pwd)
bundle=\$here
[ -d "\$bundle/lib" ] || bundle=\$(dirname "\$here")
exec "\$bundle/lib/ld-linux-x86-64.so.2" --library-path "\$bundle/lib" "\$bundle/bin/$name" "\$@"
WRAP
  chmod +x "$wrapper"
}

for name in onepassd onepass-load onepass-reference; do
  binary=$(find "$build" -type f -name "$name" -perm -u+x | head -n1)
  [ -n "$binary" ] || { echo "bundle: $name not found under $build; build it first" >&2; exit 1; }
  pack "$binary" "$out/$name"
done
for tool in "$@"; do
  binary=$(command -v "$tool") || { echo "bundle: $tool is not installed here" >&2; exit 1; }
  pack "$(readlink -f "$binary")" "$out/tools/$tool"
done
du -sh "$out"
