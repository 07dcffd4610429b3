#!/usr/bin/env bash
# install_package.sh — what `cmake --install` and `cpack -G DEB` deliver:
#   - DESTDIR + prefix /usr: every file where docs/deploy.md says, the unit
#     naming /usr/sbin/lucidd and /etc/lucid/lucidd.conf;
#   - --prefix P: everything under P (plugins too), the unit naming P;
#   - every man page renders with `man -l` without warnings, names itself,
#     carries the project's version, and `man` finds lucid, lucid-simulate
#     and lucidd in the installed tree;
#   - the .deb lists the same files (`dpkg -c`) and depends on the Debian
#     packages of the libraries the programs link (`dpkg -I`);
#   - the installed `lucid` runs from / on the installed data only.
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
    for page in "$src"/man/*.1; do echo "share/man/man1/$(basename "$page")"; done
    echo share/man/man8/lucidd.8
    for f in trace.csv vc_config.csv sharing_labels.csv colocation_pairs.csv README.md \
        LICENSE.HeliosData-CC-BY-4.0.txt LICENSE.S-Lab-1.0.txt; do
        echo "share/lucid/data/venus-sept/$f"
    done
    echo share/lucid/examples/venus.ini
    for f in lucid.conf lucidd.conf plugstack.conf; do echo "share/doc/lucid/examples/$f"; done
    if [ $have_lucidd = 1 ]; then echo sbin/lucidd; echo lib/systemd/system/lucidd.service; fi
}
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
if [ $have_lucidd = 1 ]; then
    unit=$tmp/root/usr/lib/systemd/system/lucidd.service
    check "unit runs /usr/sbin/lucidd --config /etc/lucid/lucidd.conf" \
        grep -qx 'ExecStart=/usr/sbin/lucidd --config /etc/lucid/lucidd.conf' "$unit"
    check "unit waits for its configuration" grep -qx 'ConditionPathExists=/etc/lucid/lucidd.conf' "$unit"
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
fi

# The unit as systemd reads it (where systemd is installed: no output = no
# unknown keys, the ExecStart program exists, its man page is found).
if [ $have_lucidd = 1 ] && command -v systemd-analyze >/dev/null; then
    out=$(MANPATH=$tmp/p/share/man systemd-analyze verify "$tmp/p/lib/systemd/system/lucidd.service" 2>&1)
    check "systemd-analyze verify lucidd.service: $out" test -z "$out"
fi

# 3. Man pages.
if command -v man >/dev/null; then
    for page in "$tmp"/root/usr/share/man/man*/*; do
        name=$(basename "$page"); name=${name%.*}
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
        check "man -l $name: no warnings ($warnings)" test -z "$warnings"
        text=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$page" 2>/dev/null)
        check "man -l $name: NAME names it" grep -qE "^ +$name +- " <<<"$text"
        check "man -l $name: SYNOPSIS and EXIT STATUS" \
            bash -c 'grep -q "^SYNOPSIS" <<<"$1" && grep -q "^EXIT STATUS" <<<"$1"' _ "$text"
        check "$name: version $version" grep -q "^\.TH .* \"lucid $version\"" "$page"
    done
    for name in lucid lucid-simulate lucid-queue lucidd; do
        check "man -w $name in the installed tree" \
            test "$(MANPATH="$tmp/root/usr/share/man" man -w "$name")" = \
            "$(ls "$tmp"/root/usr/share/man/man*/"$name".[18])"
    done
    # Every verb has its page, and lucid(1) names each.
    for verb in $("$lucid" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
        check "lucid-$verb(1) exists" test -f "$src/man/lucid-$verb.1"
        check "lucid(1) lists $verb" grep -q "^\.B $verb" "$src/man/lucid.1"
    done
else
    fail "man not found (apt-get install man-db groff-base): man pages not checked"
fi

# 4. The .deb.
(cd "$tmp" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1)
check "cpack -G DEB" test $? -eq 0
deb=$(ls "$tmp"/pkg/lucid_*.deb 2>/dev/null | head -1)
if [ -n "$deb" ]; then
    listing=$(dpkg -c "$deb" | awk '{print $6}')
    for f in $(expected); do check "dpkg -c lists /usr/$f" grep -qx "./usr/$f" <<<"$listing"; done
    if [ $have_plugins = 1 ]; then
        check "dpkg -c lists the plugins" grep -qx "./usr/$plugin_dir/job_submit_lucid.so" <<<"$listing"
    fi
    depends=$(dpkg-deb -f "$deb" Depends)
    # The package of each library the programs load, as the dynamic linker finds it.
    for prog in "$build/lucid" $([ $have_lucidd = 1 ] && echo "$build/lucidd"); do
        for lib in $(ldd "$prog" | awk '/=> \// && /(jansson|inih|sqlite3|slurm)/ {print $3}'); do
            owner=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | cut -d: -f1 | head -1)
            [ -n "$owner" ] || owner=$(dpkg -S "$(readlink -f "$lib" | sed 's|^/usr||')" | cut -d: -f1 | head -1)
            check "Depends ($depends) has $owner for $(basename "$lib")" grep -qw -- "$owner" <<<"$depends"
        done
    done
    check "version $version" test "$(dpkg-deb -f "$deb" Version)" = "$version"
    dpkg -x "$deb" "$tmp/x"
    # Against a DESTDIR install made now: cpack rebuilds what is out of date
    # first, so a source edited while the test ran made the programs of step
    # 1 differ from the package's (a false failure, seen twice locally).
    DESTDIR=$tmp/root_now cmake --install "$build" --prefix /usr >/dev/null
    check "dpkg -x tree equals the DESTDIR install" diff -r "$tmp/x/usr" "$tmp/root_now/usr"
else
    fail "no .deb written: $(tail -3 "$tmp/cpack.log")"
fi

# 5. The installed program on its own data, from /, with no source tree.
(cd / && env -u LUCID_DATA_DIR "$tmp/root/usr/bin/lucid" trace synth --out "$tmp/syn" --jobs 50 >/dev/null)
check "installed trace synth from /" test -s "$tmp/syn/trace.csv"
(cd / && "$tmp/root/usr/bin/lucid" simulate "$tmp/root/usr/share/lucid/examples/venus.ini" \
    --policies fifo --out "$tmp/venus" --quiet)
check "installed example experiment runs" grep -q '^fifo,all,23859,' "$tmp/venus/summary.csv"
finish install_package
