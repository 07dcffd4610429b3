#!/usr/bin/env bash
# package_split.sh — the .debs `cpack -G DEB` builds, read from the packages
# themselves (dpkg-deb, readelf, ldd), not from the build tree:
#   - lucid (the simulator and models) depends on no Slurm package, and none
#     of its ELF files needs, or resolves to, a Slurm library;
#   - lucid-slurm (where Slurm was found) holds lucidd, both plugins and the
#     units, depends on lucid of the same version and on exactly the Slurm
#     release installed here (dpkg's version of slurm-wlm-basic-plugins), and
#     its lucidd does link libslurm (so the check above can fail);
#   - every ELF file is stripped, and its debug information is in the
#     matching -dbgsym package under its build id;
#   - each package has copyright (with the data's two licences), changelog.gz
#     of this version, man pages gzipped only, and a description that does
#     not start with the package's name.
#   bash package_split.sh SOURCE_DIR BUILD_DIR CPACK
set -u
source "$1/tests/lib/checks.sh" "$2/lucid" "$1"
build=$(cd "$2" && pwd)
cpack=$3
version=$(sed -n 's/^project(lucid VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
have_live=0; [ -x "$build/lucidd" ] && have_live=1
# The Slurm release installed here, from dpkg (epoch and revision dropped):
# the packages' version is VERSION+slurmRELEASE when built with Slurm.
release=$(dpkg-query -W -f '${Version}' slurm-wlm-basic-plugins 2>/dev/null | sed 's/^[0-9]*://; s/-[^-]*$//')
deb_version=$version
if [ $have_live = 1 ] && [ -n "$release" ]; then deb_version=$version+slurm$release; fi

(cd "$tmp" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1)
check "cpack -G DEB: $(tail -3 "$tmp/cpack.log")" test $? -eq 0
deb() { ls "$tmp"/pkg/"$1"_"$deb_version"_*.deb 2>/dev/null | head -1; }

# elf_files DIR: the ELF files under DIR.
elf_files() {
    find "$1" -type f | while read -r f; do
        [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && echo "$f"
    done
}
# slurm_needs FILE: the Slurm libraries FILE needs (DT_NEEDED) or that the
# dynamic linker resolves for it (also indirectly).
slurm_needs() {
    { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
      ldd "$1" 2>/dev/null | awk '{print $1, $3}'; } | grep -i slurm | sort -u | tr '\n' ' '
}

# The common part of every package.
check_package() {
    local name=$1 file dir
    file=$(deb "$name")
    check "$name: package built" test -n "$file"
    [ -n "$file" ] || return
    dir=$tmp/x-$name
    dpkg-deb -x "$file" "$dir"
    check "$name: Package field" test "$(dpkg-deb -f "$file" Package)" = "$name"
    check "$name: version $deb_version" test "$(dpkg-deb -f "$file" Version)" = "$deb_version"
    local summary
    summary=$(dpkg-deb -f "$file" Description | head -1)
    check "$name: description '$summary' does not start with the name" \
        test "${summary%% *}" != "$name"
    check "$name: copyright" test -f "$dir/usr/share/doc/$name/copyright"
    for lic in CC-BY-4.0 S-Lab-1.0; do
        check "$name: copyright has the $lic licence text" \
            grep -qx "License: $lic" "$dir/usr/share/doc/$name/copyright"
    done
    check "$name: changelog.gz of $deb_version" \
        bash -c 'zcat "$1" | head -1 | grep -qF "lucid ($2) "' _ "$dir/usr/share/doc/$name/changelog.gz" "$deb_version"
    check "$name: man pages all gzipped" \
        test -z "$(find "$dir" -path '*/share/man/*' -type f ! -name '*.gz')"
    for elf in $(elf_files "$dir"); do
        check "$name: ${elf#$dir} stripped" bash -c '! readelf -S "$1" | grep -q "\.symtab\|\.debug_info"' _ "$elf"
        id=$(readelf -n "$elf" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
        dbg=$(deb "$name-dbgsym")
        check "$name: ${elf#$dir} has its debug symbols in $name-dbgsym" \
            bash -c 'dpkg-deb -c "$1" | grep "/usr/lib/debug/.build-id/${2:0:2}/${2:2}.debug$" >/dev/null' _ "$dbg" "$id"
    done
}

check_package lucid
lucid_dir=$tmp/x-lucid
depends=$(dpkg-deb -f "$(deb lucid)" Depends)
check "lucid: Depends ($depends) from shlibs (libc6, libjansson4, libinih1)" \
    bash -c 'for p in libc6 libjansson4 libinih1; do grep -qw "$p" <<<"$1" || exit 1; done' _ "$depends"
check "lucid: Depends names no Slurm package ($depends)" bash -c '! grep -qi slurm <<<"$1"' _ "$depends"
n=0
for elf in $(elf_files "$lucid_dir"); do
    n=$((n + 1))
    check "lucid: ${elf#$lucid_dir} needs no Slurm library ($(slurm_needs "$elf"))" test -z "$(slurm_needs "$elf")"
done
check "lucid: holds ELF files to check ($n)" test $n -ge 1
check "lucid: no lucidd, no plugins, no units" \
    test -z "$(find "$lucid_dir" -name 'lucidd*' -o -name '*.so' -o -name '*.service')"
check "lucid: the installed examples set no output folder" \
    bash -c '! grep -q "^out *=" "$1"/usr/share/lucid/examples/*.ini' _ "$lucid_dir"

if [ $have_live = 1 ]; then
    check_package lucid-slurm
    live=$(deb lucid-slurm) live_dir=$tmp/x-lucid-slurm
    depends=$(dpkg-deb -f "$live" Depends)
    check "lucid-slurm: Depends on lucid (= $deb_version)" grep -qF "lucid (= $deb_version)" <<<"$depends"
    if [ -n "$release" ]; then
        micro=${release##*.}
        next=${release%.*}.$((micro + 1))~
        check "lucid-slurm: pinned to Slurm $release ($depends)" \
            grep -qF "slurm-wlm-basic-plugins (>= $release), slurm-wlm-basic-plugins (<< $next)" <<<"$depends"
        check "lucid-slurm: the installed Slurm satisfies the pin" \
            dpkg --compare-versions "$(dpkg-query -W -f '${Version}' slurm-wlm-basic-plugins)" lt "$next"
        check "lucid-slurm: the next Slurm release would not ($next)" \
            bash -c '! dpkg --compare-versions "${1%\~}-1" lt "$2"' _ "$next" "$next"
    fi
    check "lucid-slurm: Depends has the libslurm of shlibs ($depends)" grep -qE 'libslurm[0-9]+' <<<"$depends"
    check "lucid-slurm: lucidd needs libslurm (the check above can fail)" \
        test -n "$(slurm_needs "$live_dir/usr/sbin/lucidd")"
    for f in usr/sbin/lucidd lib/systemd/system/lucidd.service lib/systemd/system/lucid-handback.service; do
        check "lucid-slurm: $f" test -f "$live_dir/$f"
    done
    check "lucid-slurm: both plugins" \
        test "$(find "$live_dir" -name 'job_submit_lucid.so' -o -name 'spank_lucid.so' | wc -l)" -eq 2
    # The prerm, run on a copy of Slurm's configuration folder: removal is
    # refused while a plugstack file requires the SPANK plugin, allowed when
    # the line is optional or gone, and an upgrade always goes ahead.
    dpkg-deb --ctrl-tarfile "$live" | tar -xO ./prerm | sed "s|/etc/slurm|$tmp/etc|g" >"$tmp/prerm"
    mkdir -p "$tmp/etc/plugstack.conf.d"
    echo "include $tmp/etc/plugstack.conf.d/*.conf" >"$tmp/etc/plugstack.conf"
    echo "required /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_lucid.so" >"$tmp/etc/plugstack.conf.d/lucid.conf"
    check "lucid-slurm: prerm refuses removal while plugstack requires spank_lucid.so" \
        bash -c '! sh "$1" remove 2>/dev/null' _ "$tmp/prerm"
    check "lucid-slurm: prerm lets an upgrade through" sh "$tmp/prerm" upgrade "$deb_version"
    echo "optional /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_lucid.so" >"$tmp/etc/plugstack.conf.d/lucid.conf"
    check "lucid-slurm: prerm allows removal once the line is optional" sh "$tmp/prerm" remove
fi
finish package_split
