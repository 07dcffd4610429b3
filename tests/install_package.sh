#!/usr/bin/env bash
# install_package.sh — what `cmake --install` and `cpack -G DEB` deliver:
#   - DESTDIR + prefix /usr: every file where docs/deploy.md says, the unit
#     naming /usr/sbin/lucidd and /etc/lucid/lucidd.conf;
#   - --prefix P: everything under P (plugins too), the unit naming P;
#   - every man page (gzipped) renders with `man -l` without warnings, names
#     itself, carries the project's version, and `man` finds lucid,
#     lucid-simulate and lucidd in the installed tree;
#   - the .debs (lucid, and lucid-slurm where lucidd is built) list the same
#     files (`dpkg -c`) and depend on the Debian packages of the libraries
#     the programs link (`dpkg -I`); tests/package_split.sh checks the split;
#   - the installed `lucid` runs from / on the installed data only; an
#     installed example writes into the current directory, and an output
#     error is reported once, with no success line after it.
#   bash install_package.sh SOURCE_DIR BUILD_DIR CPACK
set -u
source "$1/tests/lib/checks.sh" "$2/lucid" "$1"
build=$(cd "$2" && pwd)
cpack=$3
version=$(sed -n 's/^project(lucid VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
have_lucidd=0; [ -x "$build/lucidd" ] && have_lucidd=1
have_plugins=0; [ -f "$build/plugins/job_submit_lucid.so" ] && have_plugins=1

# Relative to the prefix: what every install must hold.
expected() {
    echo bin/lucid
    for page in "$src"/man/*.1; do echo "share/man/man1/$(basename "$page").gz"; done
    echo share/doc/lucid/copyright
    echo share/doc/lucid/changelog.gz
    for f in trace.csv vc_config.csv sharing_labels.csv colocation_pairs.csv README.md \
        LICENSE.HeliosData-CC-BY-4.0.txt LICENSE.S-Lab-1.0.txt; do
        echo "share/lucid/data/venus-sept/$f"
    done
    echo share/lucid/examples/venus.ini
    if [ $have_lucidd = 1 ]; then
        echo sbin/lucidd
        echo share/man/man8/lucidd.8.gz
        for f in lucid.conf lucidd.conf plugstack.conf; do echo "share/doc/lucid-slurm/examples/$f"; done
        echo share/doc/lucid-slurm/copyright
    fi
}
units="lucidd lucid-handback"
plugin_dir=$(sed -n 's/^LUCID_SLURM_PLUGIN_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")

# 1. DESTDIR, prefix /usr (the package's layout).
DESTDIR=$tmp/root cmake --install "$build" --prefix /usr >/dev/null
check "DESTDIR install ran" test -x "$tmp/root/usr/bin/lucid"
for f in $(expected); do check "DESTDIR: usr/$f" test -f "$tmp/root/usr/$f"; done
check "no reference outputs installed" test ! -e "$tmp/root/usr/share/lucid/data/venus-sept/reference"
if [ $have_plugins = 1 ]; then
    for p in job_submit_lucid.so spank_lucid.so; do
        check "DESTDIR: plugin $plugin_dir/$p" test -f "$tmp/root/usr/$plugin_dir/$p"
    done
fi
check "no debug symbols in a plain install" test ! -e "$tmp/root/usr/lib/debug"
if [ $have_lucidd = 1 ]; then
    # Units in /lib/systemd/system for prefix /usr (Debian 12's place).
    unit=$tmp/root/lib/systemd/system/lucidd.service
    check "unit runs /usr/sbin/lucidd --config /etc/lucid/lucidd.conf" \
        grep -qx 'ExecStart=/usr/sbin/lucidd --config /etc/lucid/lucidd.conf' "$unit"
    check "unit waits for its configuration" grep -qx 'ConditionPathExists=/etc/lucid/lucidd.conf' "$unit"
    check "unit has a start limit" grep -qx 'StartLimitBurst=5' "$unit"
    check "watchdog unit runs lucidd --hand-back-after on the heartbeat" \
        grep -qx 'ExecStart=/usr/sbin/lucidd --hand-back-after 300 --heartbeat /var/lib/lucid/heartbeat' \
        "$tmp/root/lib/systemd/system/lucid-handback.service"
    # Fail-open on as shipped: enabling lucidd enables the watchdog, and
    # both example configurations name the heartbeat the watchdog reads.
    check "enabling lucidd enables the watchdog" grep -qx 'Also=lucid-handback.service' "$unit"
    ex=$tmp/root/usr/share/doc/lucid-slurm/examples
    check "lucid.conf fails open on the watchdog's heartbeat" \
        grep -qx 'heartbeat=/var/lib/lucid/heartbeat' "$ex/lucid.conf"
    check "lucid.conf fail_open_after=180" grep -qx 'fail_open_after=180' "$ex/lucid.conf"
    check "lucidd.conf beats on that heartbeat" grep -qx 'heartbeat = /var/lib/lucid/heartbeat' "$ex/lucidd.conf"
    check "installed lucidd --version" test "$("$tmp/root/usr/sbin/lucidd" --version)" = "lucidd $version"
fi

# 2. --prefix P: everything under P.
cmake --install "$build" --prefix "$tmp/p" >/dev/null
for f in $(expected); do check "prefix: $f" test -f "$tmp/p/$f"; done
if [ $have_plugins = 1 ]; then
    check "prefix: plugins under the prefix" test -f "$tmp/p/$plugin_dir/spank_lucid.so"
fi
if [ $have_lucidd = 1 ]; then
    check "prefix: unit names the prefix's lucidd" \
        grep -qx "ExecStart=$tmp/p/sbin/lucidd --config $tmp/p/etc/lucid/lucidd.conf" \
        "$tmp/p/lib/systemd/system/lucidd.service"
    check "prefix: watchdog unit" test -f "$tmp/p/lib/systemd/system/lucid-handback.service"
fi

# The units as systemd reads them (where systemd is installed: no output = no
# unknown keys, the ExecStart program exists, its man page is found), and
# their sandbox as `systemd-analyze security` rates it: "OK" or better
# (exposure below 5.0; docs/deploy.md).
if [ $have_lucidd = 1 ] && command -v systemd-analyze >/dev/null; then
    for u in $units; do
        out=$(MANPATH=$tmp/p/share/man systemd-analyze verify "$tmp/p/lib/systemd/system/$u.service" 2>&1)
        check "systemd-analyze verify $u.service: $out" test -z "$out"
        rating=$(systemd-analyze security --offline=yes "$tmp/root/lib/systemd/system/$u.service" 2>&1 |
                 sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p')
        check "systemd-analyze security $u.service: '$rating' is OK or SAFE" \
            bash -c 'case "$1" in *" OK"|*" SAFE") exit 0;; *) exit 1;; esac' _ "$rating"
    done
fi

# 3. Man pages.
if command -v man >/dev/null; then
    for page in "$tmp"/root/usr/share/man/man*/*; do
        name=$(basename "$page" .gz); name=${name%.*}
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
        check "man -l $name: no warnings ($warnings)" test -z "$warnings"
        text=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$page" 2>/dev/null)
        check "man -l $name: NAME names it" grep -qE "^ +$name +- " <<<"$text"
        check "man -l $name: SYNOPSIS and EXIT STATUS" \
            bash -c 'grep -q "^SYNOPSIS" <<<"$1" && grep -q "^EXIT STATUS" <<<"$1"' _ "$text"
        check "$name: version $version" bash -c 'zcat "$1" | grep -q "^\.TH .* \"lucid $2\""' _ "$page" "$version"
    done
    for name in lucid lucid-simulate lucid-queue lucidd; do
        check "man -w $name in the installed tree" \
            test "$(MANPATH="$tmp/root/usr/share/man" man -w "$name")" = \
            "$(ls "$tmp"/root/usr/share/man/man*/"$name".[18].gz)"
    done
    # Every verb has its page, and lucid(1) names each.
    for verb in $("$lucid" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
        check "lucid-$verb(1) exists" test -f "$src/man/lucid-$verb.1"
        check "lucid(1) lists $verb" grep -q "^\.B $verb" "$src/man/lucid.1"
    done
else
    fail "man not found (apt-get install man-db groff-base): man pages not checked"
fi

# 4. The .debs.
(cd "$tmp" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1)
check "cpack -G DEB" test $? -eq 0
deb=$(ls "$tmp"/pkg/lucid_*.deb 2>/dev/null | head -1)
live_deb=$(ls "$tmp"/pkg/lucid-slurm_*.deb 2>/dev/null | head -1)
if [ $have_lucidd = 1 ]; then check "lucid-slurm .deb written" test -n "$live_deb"; fi
if [ -n "$deb" ]; then
    listing=$(for d in $deb $live_deb; do dpkg -c "$d"; done | awk '{print $6}')
    for f in $(expected); do check "dpkg -c lists /usr/$f" grep -qx "./usr/$f" <<<"$listing"; done
    if [ $have_plugins = 1 ]; then
        check "dpkg -c lists the plugins" grep -qx "./usr/$plugin_dir/job_submit_lucid.so" <<<"$listing"
        for u in $units; do
            check "dpkg -c lists /lib/systemd/system/$u.service" \
                grep -qx "./lib/systemd/system/$u.service" <<<"$listing"
        done
    fi
    # The package of each library the programs load, as the dynamic linker finds it.
    for prog in "$build/lucid" $([ $have_lucidd = 1 ] && echo "$build/lucidd"); do
        if [ "$prog" = "$build/lucid" ]; then depends=$(dpkg-deb -f "$deb" Depends)
        else depends=$(dpkg-deb -f "$live_deb" Depends); fi
        for lib in $(ldd "$prog" | awk '/=> \// && /(jansson|inih|sqlite3|slurm)/ {print $3}'); do
            owner=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | cut -d: -f1 | head -1)
            [ -n "$owner" ] || owner=$(dpkg -S "$(readlink -f "$lib" | sed 's|^/usr||')" | cut -d: -f1 | head -1)
            check "Depends ($depends) has $owner for $(basename "$lib")" grep -qw -- "$owner" <<<"$depends"
        done
    done
    # The project's version, then the Slurm release built against (+slurmX.Y.Z).
    check "version $version" grep -qE "^$version(\+slurm[0-9.]+)?\$" <<<"$(dpkg-deb -f "$deb" Version)"
    for d in $deb $live_deb; do dpkg -x "$d" "$tmp/x"; done
    # Against a stripped DESTDIR install made now: cpack rebuilds what is out
    # of date first, so a source edited while the test ran made the programs
    # of step 1 differ from the packages' (a false failure, seen twice locally).
    DESTDIR=$tmp/root_now cmake --install "$build" --prefix /usr --strip >/dev/null
    check "dpkg -x tree equals the DESTDIR install" diff -r "$tmp/x" "$tmp/root_now"
else
    fail "no .deb written: $(tail -3 "$tmp/cpack.log")"
fi

# 5. The installed program on its own data, from /, with no source tree.
(cd / && env -u LUCID_DATA_DIR "$tmp/root/usr/bin/lucid" trace synth --out "$tmp/syn" --jobs 50 >/dev/null)
check "installed trace synth from /" test -s "$tmp/syn/trace.csv"
(cd / && "$tmp/root/usr/bin/lucid" simulate "$tmp/root/usr/share/lucid/examples/venus.ini" \
    --policies fifo --out "$tmp/venus" --quiet)
check "installed example experiment runs" grep -q '^fifo,all,23859,' "$tmp/venus/summary.csv"
# Without --out: into ./out of the current directory, never beside the example.
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$tmp/root/usr/bin/lucid" simulate "$tmp/root/usr/share/lucid/examples/venus.ini" \
    --policies fifo --quiet)
check "installed example writes ./out" grep -q '^fifo,all,23859,' "$tmp/cwd/out/summary.csv"
check "nothing written under the installed share/lucid" test ! -e "$tmp/root/usr/share/lucid/out"
# An output folder that cannot be written: one error line, no success line.
: >"$tmp/cwd/file"
out=$(cd "$tmp/cwd" && "$tmp/root/usr/bin/lucid" simulate "$tmp/root/usr/share/lucid/examples/venus.ini" \
    --policies fifo --out file/sub 2>&1)
rc=$?
check "unwritable --out: exit 1 (got $rc)" test $rc -eq 1
check "unwritable --out: one line ($out)" test "$(wc -l <<<"$out")" -eq 1
check "unwritable --out: no success line" bash -c '! grep -q "simulated in" <<<"$1"' _ "$out"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    # Files that cannot be written in a folder that exists (issue 27: a
    # root-made out/ read by a user): the same.
    mkdir -p "$tmp/ro/out"
    chmod 755 "$tmp" "$tmp/ro" "$tmp/ro/out"
    out=$(cd "$tmp/ro" && runuser -u nobody -- "$tmp/root/usr/bin/lucid" simulate \
          "$tmp/root/usr/share/lucid/examples/venus.ini" --policies fifo 2>&1)
    rc=$?
    check "read-only out/ as nobody: exit 1 (got $rc)" test $rc -eq 1
    check "read-only out/ as nobody: one line, no success line ($out)" \
        bash -c 'test "$(wc -l <<<"$1")" -eq 1 && ! grep -q "simulated in" <<<"$1"' _ "$out"
fi
finish install_package
