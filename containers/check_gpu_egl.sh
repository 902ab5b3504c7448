#!/usr/bin/env bash
# On a GPU node: does MuJoCo render on the GPU inside the lapa image under Enroot, the way Pyxis runs a job?
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: containers/check_gpu_egl.sh CONTAINER

  CONTAINER  an Enroot container (`enroot list`) or a .sqsh image made by containers/enroot.sh (created as a
             temporary container and removed at the end)

Run it once on a GPU node (e.g. in an `salloc` on LRZ) where Enroot and NVIDIA's container CLI are installed, after
building the image. Two starts, each as Pyxis runs a job (`enroot start`: read-only root, Enroot's hooks, NVIDIA's
hook among them):
  1. with the image's NVIDIA_DRIVER_CAPABILITIES (compute,utility,graphics): MuJoCo renders a Meta-World episode
     through EGL on NVIDIA's library (GL vendor "NVIDIA Corporation");
  2. with NVIDIA_DRIVER_CAPABILITIES=compute,utility, the control: NVIDIA's hook mounts no graphics library, so
     NVIDIA's EGL library is absent and EGL falls back to Mesa (llvmpipe, on the CPU) or fails.
Each start prints one JSON line: NVIDIA's EGL libraries in the container, MuJoCo's GL backend, the GL vendor and
renderer, and (first start) the frames per second of an episode at 64 and 256 px. NVIDIA's hook takes
NVIDIA_DRIVER_CAPABILITIES from the calling environment before the image's, so the first start runs without it.
Exit 0 when both starts are as above, 1 when not, 2 on a usage error.
USAGE
}

case "${1:-}" in
    -h|--help) usage; exit 0 ;;
esac
[ $# -eq 1 ] || { usage >&2; exit 2; }
command -v enroot >/dev/null 2>&1 || { echo "check_gpu_egl.sh: enroot is not installed here" >&2; exit 1; }

name=$1
if [[ $name == *.sqsh ]]; then
    [ -f "$name" ] || { echo "check_gpu_egl.sh: $name does not exist" >&2; exit 1; }
    sqsh=$name name=lapa-egl-check-$$
    trap 'enroot remove --force "$name" >/dev/null 2>&1 || true' EXIT
    out=$(enroot create --name "$name" "$sqsh" 2>&1) || { echo "$out" >&2; echo "check_gpu_egl.sh: enroot create failed for $sqsh" >&2; exit 1; }
fi

# The probe: what EGL finds inside the container, then an episode rendered at each size given (the control renders none).
# NVIDIA's EGL library counts when it holds something: a start leaves the empty files its hook mounted over in a
# container that is started again.
probe='
import glob, json, os, sys
res = {"capabilities": os.environ.get("NVIDIA_DRIVER_CAPABILITIES"),
       "nvidia_egl": sorted(p for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")
                            for p in glob.glob(d + "/libEGL_nvidia.so.*.*") if os.path.getsize(p) > 0),
       "mounted_by_hook": sorted({line.split()[4] for line in open("/proc/self/mountinfo") if "libEGL_nvidia" in line})}
try:
    from lapa.sim import render_check
    res.update(render_check(sizes=[int(a) for a in sys.argv[1:]]))
except Exception as e:
    res["error"] = repr(e)[:500]
print(json.dumps(res))'

start() {   # start [CAPABILITIES]: run the probe, print its JSON line (empty when the start failed)
    # Enroot's NVIDIA hook takes NVIDIA_DRIVER_CAPABILITIES from the calling environment before the image's: unset it
    # for the image's own, or set it (and hand it into the container) for the control.
    if [ $# -eq 0 ]; then
        env -u NVIDIA_DRIVER_CAPABILITIES enroot start "$name" python3 -c "$probe" 64 256 | tail -1
    else
        NVIDIA_DRIVER_CAPABILITIES=$1 enroot start --env NVIDIA_DRIVER_CAPABILITIES "$name" python3 -c "$probe" | tail -1
    fi
}
verdict() {   # verdict WHICH JSON: PASS/FAIL of one start (WHICH: graphics or control)
    python3 - "$@" <<'PY'
import json, sys
which, line = sys.argv[1], sys.argv[2]
try:
    r = json.loads(line)
except ValueError:
    print("FAIL  the container printed no probe result (see enroot's messages above)")
    sys.exit(1)
nvidia = r.get("vendor", "").startswith("NVIDIA")
if which == "graphics":
    ok = bool(r["nvidia_egl"]) and r.get("backend") == "egl" and nvidia and r.get("256px", {}).get("std", 0) > 1
    print("PASS" if ok else "FAIL", " MuJoCo renders through NVIDIA's EGL with the image's capabilities:", r.get("renderer") or r.get("error"))
else:
    ok = not r["nvidia_egl"] and not nvidia
    print("PASS" if ok else "FAIL", " without the graphics capability NVIDIA's EGL library is absent:", r.get("renderer") or r.get("error"))
sys.exit(0 if ok else 1)
PY
}
failed=0
with_graphics=$(start) || true
echo "image's capabilities:  $with_graphics"
verdict graphics "$with_graphics" || failed=1
without=$(start compute,utility) || true
echo "without graphics:      $without"
verdict control "$without" || failed=1
exit "$failed"
