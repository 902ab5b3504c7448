#!/usr/bin/env bash
# How the stand-in image of nbs/results/gpu_h200/enroot_egl.txt was made and checked on the H200 machine (run from the
# repository root as root; .gpu14/ held enroot.tar (Enroot 4.1.2 installed under /opt/enroot), nvc/ (nvidia-container-cli
# and its libraries), debs/ (Debian bookworm libegl1, libglvnd0, libopengl0) and whl/ (mujoco 3.3.0, metaworld 3.1.1,
# PyOpenGL, gymnasium, glfw wheels for Python 3.12)). A record of the procedure, not a tool of the package.
set -uo pipefail
G=$PWD/.gpu14
log() { echo "### $(date +%T) $*"; }
log recon
uname -r; head -2 /etc/os-release; nvidia-smi -L
ls /usr/local/nvidia 2>&1; ls /usr/local/nvidia/lib64 2>/dev/null | grep -E 'EGL|GLX|glcore|eglcore|glsi|nvidia-ml|libcuda.so' | head -20
cat /etc/ld.so.conf.d/* 2>/dev/null; ldconfig -p | grep -E 'libEGL|libnvidia-ml|libcuda.so' | head
PYBASE=$(python3 -c 'import sys; print(sys.base_prefix)'); VENV=$(python3 -c 'import sys; print(sys.prefix)')
echo "python3=$(command -v python3) base=$PYBASE venv=$VENV real=$(readlink -f "$(command -v python3)")"
ls /usr/share/glvnd/egl_vendor.d 2>&1; df -h / /tmp | tail -2; stat -c '%d %n' / /usr /opt /tmp /usr/local/nvidia
for t in getent grpck pwck awk flock mountpoint ldconfig ldconfig.real; do printf '%s=%s ' $t "$(command -v $t)"; done; echo

log install enroot and nvidia-container-cli
tar -C / -xf "$G/enroot.tar"
export PATH=/opt/enroot/bin:$G/nvc/bin:/usr/local/nvidia/bin:$PATH
enroot version && nvidia-container-cli --version | head -2
d=$(dirname "$(find /usr/local/nvidia -name 'libnvidia-ml.so.1' | head -1)")
echo "$d" > /etc/ld.so.conf.d/000-nvidia-driver.conf && ldconfig
ldconfig -p | grep -E 'libnvidia-ml.so.1|libEGL_nvidia' | head -3
nvidia-container-cli info 2>&1 | head -12

log stand-in image
rm -rf /enroot-check
E=/enroot-check; export ENROOT_DATA_PATH=$E/data ENROOT_CACHE_PATH=$E/cache ENROOT_RUNTIME_PATH=$E/runtime ENROOT_TEMP_PATH=$E/tmp
mkdir -p $ENROOT_DATA_PATH $ENROOT_CACHE_PATH $ENROOT_RUNTIME_PATH $ENROOT_TEMP_PATH
R=$ENROOT_DATA_PATH/lapa-check; mkdir -p $R/usr $R/opt
cp -a /etc $R/etc
for x in bin lib lib64 sbin; do if [ -L /$x ]; then cp -a /$x $R/$x; elif [ -d /$x ]; then cp -al /$x $R/$x 2>/dev/null || cp -a /$x $R/$x; fi; done
for x in /usr/*; do [ "$x" = /usr/local ] && continue; cp -al "$x" $R/usr/ 2>/dev/null || cp -a "$x" $R/usr/; done
mkdir -p $R/usr/local/bin
echo "usr: $(du -sh $R/usr 2>/dev/null | cut -f1)"
# nothing of the driver in the image: NVIDIA's hook must bring it
rm -f $R/etc/ld.so.conf.d/000-nvidia-driver.conf
find $R/usr/lib $R/usr/lib64 -maxdepth 2 \( -name 'libEGL_nvidia*' -o -name 'libGLX_nvidia*' -o -name 'libnvidia-*' -o -name 'libcuda.so*' -o -name 'libGLESv*_nvidia*' \) -print -delete 2>/dev/null | wc -l
grep -rl nvidia $R/etc/ld.so.conf.d/ 2>/dev/null | xargs -r rm -v
ls $R/usr/share/glvnd/egl_vendor.d 2>/dev/null; grep -l -i nvidia $R/usr/share/glvnd/egl_vendor.d/* 2>/dev/null | xargs -r rm -v
# the Dockerfile's glvnd packages (Debian's here), its vendor file and its ENV
mkdir -p $E/debs && for f in "$G"/debs/*.deb; do dpkg-deb -x "$f" $E/debs 2>/dev/null || (cd $E/debs && ar p "$f" data.tar.xz | tar -xJ); done
cp -a --remove-destination $E/debs/usr/. $R/usr/
python3 - "$R" <<'EOF'
import shlex, sys, pathlib
R = pathlib.Path(sys.argv[1])
t = pathlib.Path("containers/Dockerfile").read_text().replace("\\\n", " ")
env = next(l for l in t.splitlines() if l.startswith("ENV "))[4:]
run = next(l for l in t.splitlines() if l.startswith("RUN apt-get"))
vendor = shlex.split(run.split("printf", 1)[1].split(">")[0])[0].encode().decode("unicode_escape")
path = run.split(">")[-1].strip()
(R / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True); (R / path.lstrip("/")).write_text(vendor)
lines = shlex.split(env) + ["NVIDIA_VISIBLE_DEVICES=all",   # NGC's images set it
         f"PATH={sys.prefix}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
         "PYTHONPATH=/opt/lapa:/opt/lapa-site", f"VIRTUAL_ENV={sys.prefix}"]
(R / "etc/environment").write_text("\n".join(lines) + "\n")
print(path, vendor.strip()); print("\n".join(lines))
EOF
: > $R/etc/fstab
for p in "$VENV" "$PYBASE"; do case "$p" in /usr|/usr/*) ;; *) mkdir -p "$R$p"; echo "$p $p none x-create=dir,bind,ro,nosuid,nodev,private 0 -1" >> $R/etc/fstab;; esac; done
cat $R/etc/fstab
mkdir -p $R/opt/lapa $R/opt/lapa-site && cp -a lapa $R/opt/lapa/
for w in "$G"/whl/*.whl; do python3 -m zipfile -e "$w" $R/opt/lapa-site/; done
ldconfig -r $R 2>&1 | head -3
ls $R/usr/lib/x86_64-linux-gnu | grep -E 'libEGL|libOpenGL|libGLdispatch|mesa' | head

log the check, as a user runs it
containers/check_gpu_egl.sh lapa-check 2>&1 | tee "$OUT/check_gpu_egl.txt"; echo "check rc=${PIPESTATUS[0]}" | tee -a "$OUT/check_gpu_egl.txt"

log what the hook did, with its debug log
env | grep ^NVIDIA_; NVIDIA_DRIVER_CAPABILITIES=compute,utility NVIDIA_DEBUG_LOG=1 enroot start --env NVIDIA_DRIVER_CAPABILITIES lapa-check sh -c 'ls -la /usr/lib/x86_64-linux-gnu/libEGL_nvidia*; grep -c nvidia /proc/self/mountinfo; grep EGL /proc/self/mountinfo' > "$OUT/control_debug.txt" 2>&1
grep -E 'EGL|graphics|configure|capab' "$OUT/control_debug.txt" | grep -v 'nvc_mount.c:90' | tail -20
NVIDIA_DEBUG_LOG=1 enroot start lapa-check sh -c 'ls -la /usr/lib/x86_64-linux-gnu | grep -i nvidia; ls /dev | grep nvidia; nvidia-smi -L; cat /usr/share/glvnd/egl_vendor.d/10_nvidia.json' > "$OUT/hook_debug.txt" 2>&1
grep -E -i 'mount|graphics|EGL|error' "$OUT/hook_debug.txt" | tail -40
log done
