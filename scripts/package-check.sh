#!/usr/bin/env bash
# package-check.sh — what a Debian site gets (.ci/run; docs/deploy.md):
#   1. the packages built the way Debian builds (dpkg-buildflags with every
#      hardening feature, CMAKE_BUILD_TYPE=None, warnings as errors) in
#      BUILD_DIR (default build-deb);
#   2. lintian on each .deb: no error, no warning without an override (and
#      every override carries its reason in packaging/debian/*.lintian-overrides);
#   3. apt-get install of lucid and lucid-slurm, an installed example run
#      as a user (nobody) from a folder of its own: results in ./out there,
#      nothing under /usr/share/lucid;
#   4. apt-get purge of both: no package state and none of their files left.
# Needs root (apt-get), lintian, and no lucid package installed before.
#   bash scripts/package-check.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-deb}
say() { echo "package-check: $*"; }
die() { echo "package-check: FAIL: $*" >&2; exit 1; }

if dpkg-query -W -f '${Status}\n' lucid lucid-slurm 2>/dev/null | grep -q installed; then
    die "lucid or lucid-slurm is installed already: purge it first"
fi

# 1. Build.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)" \
LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" \
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=None -DLUCID_WERROR=ON \
          -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >/dev/null
targets="lucid_cli lucid_package_files lucid_example_files"
grep -q '^LUCID_SLURM_PLUGIN_DIR' "$build/CMakeCache.txt" && targets="$targets lucidd job_submit_lucid spank_lucid"
# shellcheck disable=SC2086
cmake --build "$build" -j2 --target $targets >/dev/null
rm -f "$build"/*.deb
(cd "$build" && cpack -G DEB >/dev/null 2>&1) || die "cpack -G DEB failed"
mapfile -t debs < <(ls "$build"/*.deb)
say "built: ${debs[*]##*/}"
ls "$build"/lucid-slurm_*.deb >/dev/null 2>&1 ||
    die "no lucid-slurm package (libslurm-dev and slurm-wlm-basic-plugins-dev missing?)"

# 2. lintian, one package at a time (given several at once, lintian 2.116
#    groups them by source and printed nothing here).
for deb in "${debs[@]}"; do
    rc=0
    out=$(lintian --fail-on error,warning --display-info --show-overrides "$deb" 2>&1) || rc=$?
    out=$(grep -v 'root privileges' <<<"$out" || true)
    [ $rc = 0 ] || die "lintian ${deb##*/} (exit $rc):"$'\n'"$out"
    say "lintian ${deb##*/}: no errors, no warnings${out:+$'\n'$out}"
done

# 3. Install, run an example as a user from elsewhere.
files=$(for deb in "$build"/lucid_*.deb "$build"/lucid-slurm_*.deb; do dpkg-deb -c "$deb"; done |
        awk '{print substr($6, 2)}' | grep -v '/$')
apt-get install -y -qq "./$build/"lucid_*.deb "./$build/"lucid-slurm_*.deb >/dev/null
trap 'apt-get purge -y -qq lucid-slurm lucid >/dev/null 2>&1 || true' EXIT
work=$(mktemp -d)
chown nobody "$work"
runuser -u nobody -- sh -c "cd '$work' && lucid simulate /usr/share/lucid/examples/venus.ini" >"$work/log" ||
    die "lucid simulate as nobody: $(tail -3 "$work/log")"
for policy in fifo sjf srtf qssf tiresias lucid; do
    grep -q "^$policy,all,23859," "$work/out/summary.csv" || die "no $policy row in $work/out/summary.csv"
done
[ ! -e /usr/share/lucid/out ] || die "the example wrote into /usr/share/lucid/out"
say "lucid simulate /usr/share/lucid/examples/venus.ini as nobody: six policies in ./out"
version=$(dpkg-query -W -f '${Version}' lucid-slurm)
lucidd --version | grep -qx "lucidd ${version%%+*}" || die "lucidd --version: not ${version%%+*} (package $version)"
rm -rf "$work"

# 4. Purge: nothing left.
apt-get purge -y -qq lucid-slurm lucid >/dev/null
trap - EXIT
left=$(dpkg-query -W -f '${Package} ${Status}\n' lucid lucid-slurm 2>/dev/null | grep -v 'not-installed' || true)
[ -z "$left" ] || die "package state left after purge: $left"
for f in $files; do
    [ ! -e "$f" ] || die "$f left after purge"
done
for d in /usr/share/lucid /usr/share/doc/lucid /usr/share/doc/lucid-slurm /etc/lucid /var/lib/lucid; do
    [ ! -e "$d" ] || die "$d left after purge"
done
say "purged: nothing left"
