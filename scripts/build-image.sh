#!/usr/bin/env bash
# Builds the hamisim container image without Docker: a Debian 12 root filesystem holding only
# the packages whose shared libraries `hamisim` links (found with ldd + dpkg -S, so the list
# follows the binary), made by mmdebstrap, then packed as an OCI image with umoci.
#
#   scripts/build-image.sh                  # build hamisim (release), then the image
#   BINARY=path/to/hamisim scripts/build-image.sh   # package an already built binary
#
# Output (OUT, default build-image/):
#   oci/                    OCI image layout, tag $TAG
#   hamisim-$TAG.oci.tar    the same layout as one tarball:
#                             podman load -i hamisim-$TAG.oci.tar
#                             skopeo copy oci-archive:hamisim-$TAG.oci.tar docker://REGISTRY/hamisim:$TAG
#   rootfs/                 the root filesystem that went into the image (for inspection)
#
# What the image holds (docs/deploy.md "Image"):
#   /opt/hamisim/bin/hamisim     the entry point, stripped, no file capabilities
#   /opt/hamisim/bin/scheduler   a copy of hamisim with cap_net_bind_service=+ep: HAMi's chart
#                                runs `scheduler` (found through PATH) on :443 as the image user
#   PATH=/opt/hamisim/bin:...    USER 65532:65532, ENTRYPOINT /opt/hamisim/bin/hamisim
#
# Needs root (mmdebstrap --mode=root, setcap, umoci's xattrs) and the Debian archive; installs
# mmdebstrap, umoci and libcap2-bin with apt-get when they are missing.
# Environment: TAG (default: the binary's version), EXTRA_TAGS (more tags, space-separated),
#   OUT, BINARY, SUITE (bookworm),
#   MIRRORS (sources.list lines separated by '|'), SOURCE_DATE_EPOCH (default: last commit).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$SECONDS

[ "$(id -u)" = 0 ] || { echo "build-image: run as root (mmdebstrap --mode=root, setcap)" >&2; exit 1; }
# The tools, from Debian, when missing (this script is not part of scripts/install-deps.sh: only
# the image build needs them).
tools=()
command -v mmdebstrap >/dev/null || tools+=(mmdebstrap)
command -v umoci >/dev/null || tools+=(umoci)
command -v setcap >/dev/null && command -v getcap >/dev/null || tools+=(libcap2-bin)
if [ ${#tools[@]} -gt 0 ]; then
  echo "== installing ${tools[*]} ==" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null
fi

out="${OUT:-$root/build-image}"
suite="${SUITE:-bookworm}"
mirrors="${MIRRORS:-deb http://deb.debian.org/debian $suite main|deb http://deb.debian.org/debian $suite-updates main|deb http://deb.debian.org/debian-security $suite-security main}"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

# ---- 1. the binary ----------------------------------------------------------------------
if [ -z "${BINARY:-}" ]; then
  echo "== build hamisim (release) =="
  nice scripts/build.sh release hamisim
  binary="$root/build/src/cli/hamisim"
else
  binary="$(realpath "$BINARY")"
fi
[ -x "$binary" ] || { echo "build-image: $binary is not an executable" >&2; exit 1; }
version="$("$binary" --version | awk '{print $2}')"
tag="${TAG:-$version}"
t_binary=$((SECONDS - start))

# ---- 2. the packages its libraries come from ---------------------------------------------
# Every shared library ldd resolves, mapped to the Debian package that ships it. The build
# machine is Debian 12 like the image, so the sonames and package names agree.
packages=()
while read -r lib; do
  pkg="$(dpkg -S "$(realpath "$lib")" 2>/dev/null | head -n1 | cut -d: -f1)" ||
    true
  [ -n "$pkg" ] || pkg="$(dpkg -S "$lib" 2>/dev/null | head -n1 | cut -d: -f1)" || true
  [ -n "$pkg" ] || { echo "build-image: no Debian package ships $lib" >&2; exit 1; }
  packages+=("$pkg")
done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
# ca-certificates: the system trust store, for the TLS clients (API server, extenders) when no
# CA file is given. Its bundle is assembled below (extract runs no maintainer scripts).
packages+=(ca-certificates)
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
echo "== packages: ${packages[*]} =="

# ---- 3. the root filesystem ----------------------------------------------------------------
rm -rf "$out"
mkdir -p "$out"
rootfs="$out/rootfs"
IFS='|' read -r -a mirror_lines <<< "$mirrors"
# extract: unpack the listed packages and their dependencies, run nothing (no shell, no dpkg,
# no apt in the image).
mmdebstrap --mode=root --variant=extract --quiet \
  --include="$(IFS=,; echo "${packages[*]}")" \
  "$suite" "$rootfs" "${mirror_lines[@]}"
t_rootfs=$((SECONDS - start))

# The trust store update-ca-certificates would have written.
mkdir -p "$rootfs/etc/ssl/certs"
cat "$rootfs"/usr/share/ca-certificates/mozilla/*.crt > "$rootfs/etc/ssl/certs/ca-certificates.crt"
# Leave out what hamisim never reads: documentation, the programs and scripts the library
# packages bring along (openssl, debconf, perl modules), glibc's iconv modules (8 MB; hamisim
# converts no character sets) and package-manager state.
rm -rf "$rootfs"/usr/share/{doc,man,info,lintian,locale,bug,gcc,gdb,perl5,debconf,pixmaps} \
  "$rootfs"/usr/share/{bash-completion,ca-certificates} "$rootfs"/usr/bin "$rootfs"/usr/sbin \
  "$rootfs"/usr/lib/x86_64-linux-gnu/gconv "$rootfs"/usr/lib/ssl/misc \
  "$rootfs"/var/cache/apt "$rootfs"/var/lib/apt "$rootfs"/var/lib/dpkg \
  "$rootfs"/var/cache/debconf "$rootfs"/var/log/* "$rootfs"/etc/apt "$rootfs"/etc/dpkg \
  "$rootfs"/etc/{debconf.conf,fstab,hostname,resolv.conf,ca-certificates,ca-certificates.conf}
# Users: root and the image user hamisim (65532, as distroless' nonroot).
mkdir -p "$rootfs/etc" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
cat > "$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
hamisim:x:65532:65532:hamisim:/nonexistent:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
EOF
cat > "$rootfs/etc/group" <<'EOF'
root:x:0:
hamisim:x:65532:
nogroup:x:65534:
EOF
printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
# The program: stripped; `scheduler` is a copy (not a link: file capabilities belong to the
# inode) that may bind ports below 1024 as the image user. hamisim itself carries no file
# capability, so it still starts where every capability is dropped (an +ep file capability
# outside the bounding set makes execve fail with EPERM).
install -d "$rootfs/opt/hamisim/bin"
objcopy --strip-all "$binary" "$rootfs/opt/hamisim/bin/hamisim"
chmod 0755 "$rootfs/opt/hamisim/bin/hamisim"
cp "$rootfs/opt/hamisim/bin/hamisim" "$rootfs/opt/hamisim/bin/scheduler"
setcap cap_net_bind_service=+ep "$rootfs/opt/hamisim/bin/scheduler"
# The examples where `hamisim plan` looks next to its binary (<prefix>/share/hamisim/examples, the
# layout of `cmake --install`): with no arguments it plans examples/plan.
install -d "$rootfs/opt/hamisim/share/hamisim"
cp -r "$root/examples" "$rootfs/opt/hamisim/share/hamisim/examples"
# Every library the binary needs resolves inside the root filesystem, and the no-argument plan
# finds its example there, not at this machine's checkout.
chroot "$rootfs" /opt/hamisim/bin/hamisim --version >/dev/null
chroot "$rootfs" /opt/hamisim/bin/hamisim plan 2>"$out/plan.err" >/dev/null
grep -q "bundled example in /opt/hamisim/share/hamisim/examples/plan" "$out/plan.err"

# ---- 4. the OCI image -------------------------------------------------------------------
layout="$out/oci"
bundle="$out/bundle"
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci unpack --image "$layout:$tag" "$bundle" >/dev/null
cp -a "$rootfs"/. "$bundle/rootfs/"
umoci repack --image "$layout:$tag" "$bundle" >/dev/null
rm -rf "$bundle"
created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
umoci config --image "$layout:$tag" \
  --author "hamisim" --created "$created" --history.created "$created" \
  --os linux --architecture amd64 \
  --config.user 65532:65532 \
  --config.entrypoint /opt/hamisim/bin/hamisim --config.cmd --help \
  --config.workingdir / \
  --config.env PATH=/opt/hamisim/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.exposedports 8443/tcp --config.exposedports 9395/tcp --config.exposedports 443/tcp \
  --config.label org.opencontainers.image.title=hamisim \
  --config.label org.opencontainers.image.version="$version" \
  --config.label org.opencontainers.image.revision="$revision" \
  --config.label org.opencontainers.image.created="$created" \
  --config.label org.opencontainers.image.base.name="debian:$suite (mmdebstrap --variant=extract)"
# More names for the same image, e.g. the HAMi tag a chart forces on the extender
# (deploy/helm/hami-values.yaml).
for extra in ${EXTRA_TAGS:-}; do
  umoci tag --image "$layout:$tag" "$extra"
done
umoci gc --layout "$layout"
tar -C "$layout" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
  -cf "$out/hamisim-$tag.oci.tar" .

# ---- 5. check what went in --------------------------------------------------------------
check="$out/check"
umoci unpack --image "$layout:$tag" "$check" >/dev/null
caps="$(getcap "$check/rootfs/opt/hamisim/bin/scheduler")"
case "$caps" in
  *cap_net_bind_service*ep*|*cap_net_bind_service=ep*) ;;
  *) echo "build-image: the file capability of scheduler did not survive packing: '$caps'" >&2
     exit 1 ;;
esac
[ -z "$(getcap "$check/rootfs/opt/hamisim/bin/hamisim")" ] ||
  { echo "build-image: hamisim must carry no file capability" >&2; exit 1; }
rm -rf "$check"
t_total=$((SECONDS - start))

layer_bytes=$(find "$layout/blobs" -type f -size +100k -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "== image $tag =="
echo "layout:        $layout ($tag)"
echo "tarball:       $out/hamisim-$tag.oci.tar ($(du -b "$out/hamisim-$tag.oci.tar" | cut -f1) bytes)"
echo "layer (gzip):  $layer_bytes bytes"
echo "rootfs:        $(du -sb "$rootfs" | cut -f1) bytes unpacked"
echo "capabilities:  $caps"
echo "time:          ${t_total}s (binary ${t_binary}s, rootfs $((t_rootfs - t_binary))s, pack $((t_total - t_rootfs))s)"
