#!/usr/bin/env bash
# Turn the lapa Docker image into the Enroot SquashFS file (.sqsh) that Slurm jobs run through Pyxis
# (`lapa slurm submit STAGE slurm.container_image=OUTPUT.sqsh`). Run it on a login node that has Enroot.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: containers/enroot.sh IMAGE OUTPUT.sqsh [NAME]

  IMAGE        what `enroot import` reads: docker://REGISTRY#REPO:TAG (a registry; credentials in
               ~/.config/enroot/.credentials), dockerd://lapa:latest (the local Docker daemon) or
               podman://localhost/lapa:latest (the local podman/buildah image store)
  OUTPUT.sqsh  the SquashFS image to write, e.g. /dss/dssfs04/pn57pi/containers/lapa_v1.sqsh
  NAME         unused (kept so that older command lines still work)

One step: `enroot import --output OUTPUT.sqsh IMAGE` pulls the layers into one SquashFS file, which is
already the immutable image Pyxis runs. The blueprint's `enroot create` + `enroot export` after it unpack that
file into a container root and pack it again unchanged: they only matter when the root is modified in between
(e.g. `enroot start --rw NAME` to install something by hand), so this script leaves them out; NAME is kept
for the command line's sake and unused.

Build the Docker image first:  docker build -f containers/Dockerfile -t lapa:latest .
Then, e.g.:                    containers/enroot.sh dockerd://lapa:latest /dss/dssfs04/pn57pi/containers/lapa_v1.sqsh
USAGE
}

case "${1:-}" in
    -h|--help) usage; exit 0 ;;
esac
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    usage >&2; exit 2
fi

image=$1
output=$2
# a third argument (NAME, used by earlier versions for enroot create) is accepted and ignored

if ! command -v enroot >/dev/null 2>&1; then
    echo "enroot.sh: enroot is not installed here (it is on LRZ's login and compute nodes)" >&2; exit 1
fi
if [ -e "$output" ]; then
    echo "enroot.sh: $output exists; remove it or name another file" >&2; exit 1
fi
mkdir -p "$(dirname "$output")"

partial="$output.partial"
shim=""
trap 'rm -f "$partial"; [ -z "$shim" ] || rm -rf "$shim"' EXIT
if [[ $image == podman://* ]]; then
    # Enroot's podman:// import (4.1.2 and earlier) removes its temporary container with `docker rm` on exit. Without
    # a Docker daemon (or without docker) that fails and the import exits 1 after writing the image; with one it
    # removes nothing. Either way the container stays in podman's store. A `docker` that runs podman, first on
    # PATH for the import alone, makes that cleanup do what it means.
    shim=$(mktemp -d)
    # shellcheck disable=SC2016  # "$@" is for the shim
    printf '#!/bin/sh\nexec podman "$@"\n' > "$shim/docker"
    chmod +x "$shim/docker"
    PATH="$shim:$PATH"
fi
echo "enroot import --output $output $image"
rm -f "$partial"
enroot import --output "$partial" "$image"   # into a partial file: a failed import never leaves a half image at OUTPUT
mv "$partial" "$output"
echo "wrote $output"
