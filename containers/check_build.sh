#!/usr/bin/env bash
# Build containers/Dockerfile with buildah (no Docker daemon needed) and check the image it makes.
# shellcheck disable=SC2317,SC2329  # the functions below run through check() (SC2317 in older shellcheck)
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: containers/check_build.sh [--base IMAGE|stand-in[:SUITE]] [--smoke] [--enroot] [--keep]

Builds containers/Dockerfile from this checkout with buildah and checks what the image promises:
  1. the build runs to its end on BASE;
  2. a code change rebuilds only the code layers: the dependency layer comes from the cache;
  3. the base image's torch is kept (same version before and after);
  4. the runtime image has no dev extra (nbdev is not importable) and `lapa --help` runs;
  5. glvnd's NVIDIA vendor file is there, NVIDIA_DRIVER_CAPABILITIES includes graphics, and MuJoCo renders a
     Meta-World frame through EGL (on a machine without NVIDIA's EGL library glvnd falls back to Mesa);
  6. with --smoke: `lapa pipeline experiment=smoke` runs to its report inside the image;
  7. with --enroot: containers/enroot.sh turns the image into a .sqsh file (podman://); in an Enroot container made
     from it (read-only root, as `enroot start` runs it) Enroot's NVIDIA hook asks for the graphics libraries
     (a stand-in nvidia-container-cli records it) and checks 4 to 6 pass again: the way Pyxis runs a job.

  --base IMAGE  the base (default: the Dockerfile's NGC image). Where that cannot be pulled, --base stand-in
                builds a stand-in once: Debian bookworm (debootstrap) with its Python (3.11), pip and a torch in
                settings.ini's range from the package index (localhost/lapa-check-base:bookworm); stand-in:trixie
                takes Debian 13 and Python 3.13 (NGC's 25.12 image has 3.12 between the two).
  --smoke       also run the smoke pipeline in the image (about a minute on 2 cores).
  --enroot      also check the image under Enroot (needs enroot and podman; about 3 minutes and twice the image's
                size on /tmp).
  --keep        keep the built image (localhost/lapa:check), its working containers and the build's layer cache
                (otherwise removed at the end with the other untagged images: buildah rmi --prune).

Run as root (buildah, `--isolation chroot`). STORAGE_DRIVER (e.g. vfs, where overlay cannot mount inside a
container) goes to buildah and podman; unset, both use their default store (overlay).
BUILD_VOLUMES adds buildah volume flags to every build and run step, for a machine whose pip reads local
indexes or a proxy's CA, e.g. BUILD_VOLUMES="-v /etc/pip.conf:/etc/pip.conf:ro -v /opt/wheels:/opt/wheels:ro".
Exit 0 when every check passes, 1 when one fails, 2 on a usage error.
USAGE
}

base="" smoke=0 enroot=0 keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --base) [ $# -ge 2 ] || { usage >&2; exit 2; }; base=$2; shift 2 ;;
        --smoke) smoke=1; shift ;;
        --enroot) enroot=1; shift ;;
        --keep) keep=1; shift ;;
        *) echo "check_build.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

command -v buildah >/dev/null 2>&1 || { echo "check_build.sh: buildah is not installed (Debian/Ubuntu: apt-get install buildah)" >&2; exit 1; }
if [ "$enroot" = 1 ]; then
    for tool in enroot podman; do
        command -v "$tool" >/dev/null 2>&1 || { echo "check_build.sh: --enroot needs $tool, which is not installed" >&2; exit 1; }
    done
fi
storage=()   # buildah 1.28 ignores STORAGE_DRIVER (podman reads it): hand it over as a flag
[ -n "${STORAGE_DRIVER:-}" ] && storage=(--storage-driver "$STORAGE_DRIVER")
buildah() { command buildah "${storage[@]}" "$@"; }
read -r -a volumes <<< "${BUILD_VOLUMES:-}"
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/lapa-check-build.XXXXXX)
ctrs=()
cleanup() {
    if [ "$keep" = 0 ]; then
        for c in "${ctrs[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
        buildah rmi localhost/lapa:check >/dev/null 2>&1 || true
        buildah rmi --prune >/dev/null 2>&1 || true   # the layer cache (with vfs, a full copy of the image per step)
    fi
    rm -rf "$work"
}
trap cleanup EXIT

failed=0
check() {   # check NAME COMMAND...: run it, print PASS/FAIL
    local name=$1; shift
    if "$@" >"$work/check.log" 2>&1; then echo "PASS  $name"
    else echo "FAIL  $name"; sed 's/^/      /' "$work/check.log" | tail -20; failed=1; fi
}

stand_in_base() {   # stand_in_base SUITE: Debian SUITE + its Python + pip + a torch in settings.ini's range
    local suite=$1 image=localhost/lapa-check-base:$1
    if buildah inspect --type image "$image" >/dev/null 2>&1; then echo "$image"; return; fi
    command -v debootstrap >/dev/null 2>&1 || { echo "check_build.sh: the stand-in base needs debootstrap" >&2; exit 1; }
    local torch_req
    torch_req=$(grep -o 'torch[<>=!~][^ ]*' "$repo/settings.ini" | head -1)
    debootstrap --variant=minbase --include=python3,python3-pip,ca-certificates "$suite" "$work/rootfs" \
        http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 || { tail "$work/debootstrap.log" >&2; exit 1; }
    rm -f "$work"/rootfs/usr/lib/python3*/EXTERNALLY-MANAGED   # pip installs system-wide, as in NGC's images
    tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
    local c
    c=$(buildah from scratch)
    buildah add "$c" "$work/rootfs.tar" / >/dev/null
    # Debian's own images' PATH and command (`docker create` and `podman create`, hence Enroot's import, need one)
    buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash "$c"
    buildah run --isolation chroot "${volumes[@]}" "$c" -- python3 -m pip install -q --no-cache-dir "$torch_req" >&2
    buildah commit -q --rm "$c" "$image" >/dev/null
    rm -rf "$work/rootfs" "$work/rootfs.tar"
    echo "$image"
}

case "$base" in
    stand-in) base=$(stand_in_base bookworm) ;;
    stand-in:*) base=$(stand_in_base "${base#stand-in:}") ;;
esac
base_args=()
[ -n "$base" ] && base_args=(--build-arg "BASE=$base")

# The build context: the checkout's tracked files as they are on disk (uncommitted edits included).
mkdir -p "$work/ctx"
(cd "$repo" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$work/ctx"

build() {   # build LOG: build the context into localhost/lapa:check
    (cd "$work/ctx" && buildah bud --isolation chroot --layers "${volumes[@]}" "${base_args[@]}" \
        -f containers/Dockerfile -t localhost/lapa:check .) >"$1" 2>&1 || { tail -20 "$1"; return 1; }
}
start=$(date +%s)
check "build on ${base:-the default base}" build "$work/build1.log"
echo "      first build: $(( $(date +%s) - start )) s"
[ "$failed" = 0 ] || exit 1

# A code change: every step up to the dependency install must come from the cache.
echo "# check_build.sh: a code change" >> "$work/ctx/lapa/__init__.py"
start=$(date +%s)
check "rebuild after a code change" build "$work/build2.log"
echo "      rebuild: $(( $(date +%s) - start )) s"
dependency_layer_cached() {
    awk '/^STEP [0-9]+\/[0-9]+: RUN .*-r \/tmp\/requirements.txt/ {dep=1; next}
         dep && /Using cache/ {print "dependency layer: Using cache"; exit 0}
         dep && /^STEP / {print "the dependency layer was rebuilt"; exit 1}
         END {if (!dep) {print "no dependency step in the build log"; exit 1}}' "$work/build2.log"
}
check "dependency layer from the cache" dependency_layer_cached

c=$(buildah from localhost/lapa:check); ctrs+=("$c")
mkdir -p "$work/runs"
in_image() { buildah run --isolation chroot "${volumes[@]}" -v "$work/runs:/runs" "$c" -- "$@"; }
torch_of() { buildah run --isolation chroot "$1" -- python3 -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -1; }
default_base=$(sed -n 's/^ARG BASE=//p' "$repo/containers/Dockerfile")
b=$(buildah from "${base:-$default_base}"); ctrs+=("$b")
base_torch=$(torch_of "$b")
image_torch=$(torch_of "$c")
check "base torch kept: $base_torch, in the image $image_torch" test -n "$base_torch" -a "$base_torch" = "$image_torch"
check "no dev extra (nbdev absent)" in_image sh -c '! python3 -c "import nbdev" 2>/dev/null'

runtime_checks() {   # runtime_checks RUN WHERE: what the image promises when it runs, each command through RUN
    local run=$1 where=$2 start
    check "lapa --help ($where)" "$run" lapa --help
    # shellcheck disable=SC2016  # expanded inside the container
    check "NVIDIA EGL vendor file, graphics capability, MUJOCO_GL ($where)" "$run" sh -c \
        'grep -q libEGL_nvidia.so.0 /usr/share/glvnd/egl_vendor.d/10_nvidia.json && echo "$NVIDIA_DRIVER_CAPABILITIES" | grep -q graphics && test "$MUJOCO_GL" = egl'
    check "MuJoCo renders through EGL ($where)" "$run" python3 -c '
from lapa.sim import generate_episode, gl_backend
ep = generate_episode("button-press-v3", 0, image_size=64)
assert gl_backend() == "egl", gl_backend()
assert ep.frames.std() > 1, "blank frames"
print("egl", ep.frames.shape)'
    if [ "$smoke" = 1 ]; then
        start=$(date +%s)
        # shellcheck disable=SC2016  # expanded inside the container
        check "lapa pipeline experiment=smoke ($where)" "$run" sh -c \
            'cd /runs && lapa pipeline experiment=smoke run_dir="/runs/$1" && test -s "/runs/$1/report.md"' sh "smoke-$where"
        echo "      smoke pipeline: $(( $(date +%s) - start )) s"
    fi
}
runtime_checks in_image image

if [ "$enroot" = 1 ]; then
    # Enroot's own folders inside the work folder, so that the check leaves nothing behind
    export ENROOT_DATA_PATH=$work/enroot/data ENROOT_CACHE_PATH=$work/enroot/cache \
           ENROOT_RUNTIME_PATH=$work/enroot/runtime ENROOT_TEMP_PATH=$work/enroot/tmp
    mkdir -p "$ENROOT_DATA_PATH" "$ENROOT_CACHE_PATH" "$ENROOT_RUNTIME_PATH" "$ENROOT_TEMP_PATH"
    start=$(date +%s)
    check "containers/enroot.sh podman://localhost/lapa:check" "$repo/containers/enroot.sh" podman://localhost/lapa:check "$work/lapa.sqsh"
    echo "      import: $(( $(date +%s) - start )) s"
    if [ -s "$work/lapa.sqsh" ]; then
        check "enroot create" enroot create --name lapa-check "$work/lapa.sqsh"
        # Enroot's NVIDIA hook reads the image's NVIDIA_DRIVER_CAPABILITIES and hands each capability to
        # nvidia-container-cli; a stand-in for that tool (no GPU here) records what the hook asked for.
        mkdir -p "$work/nvidia"
        # shellcheck disable=SC2016  # "$@" is for the stand-in
        printf '#!/bin/sh\necho "$@" > %s/args\n' "$work/nvidia" > "$work/nvidia/nvidia-container-cli"
        chmod +x "$work/nvidia/nvidia-container-cli"
        nvidia_hook_asks_graphics() {
            env -u NVIDIA_DRIVER_CAPABILITIES PATH="$work/nvidia:$PATH" NVIDIA_VISIBLE_DEVICES=all enroot start lapa-check true
            cat "$work/nvidia/args"; grep -q -- --graphics "$work/nvidia/args"
        }
        check "Enroot's NVIDIA hook asks for the graphics libraries" nvidia_hook_asks_graphics
        in_enroot() { enroot start --mount "$work/runs:/runs" lapa-check "$@"; }
        runtime_checks in_enroot enroot
    fi
fi
[ "$failed" = 0 ] && echo "check_build.sh: all checks passed" || echo "check_build.sh: some checks failed" >&2
exit "$failed"
