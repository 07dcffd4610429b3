#!/bin/sh
# copyright.sh IN OUT LICENSE-FILE... — the package's DEP-5 copyright file:
# IN, then one stand-alone License paragraph per file, named by the part of
# its name after "LICENSE." up to the last "-" group ("LICENSE.S-Lab-1.0.txt"
# -> S-Lab-1.0, "LICENSE.HeliosData-CC-BY-4.0.txt" -> CC-BY-4.0), its text
# indented one space, blank lines as " ." (copyright-format 1.0).
set -eu
in=$1 out=$2
shift 2
{
    cat "$in"
    printf '\nLicense: lucid-unspecified\n'
    printf ' The lucid source tree does not state a licence for its own code yet.\n'
    for file in "$@"; do
        name=$(basename "$file" .txt)
        name=${name#LICENSE.}
        name=${name#HeliosData-}
        printf '\nLicense: %s\n' "$name"
        # drop a byte-order mark and trailing blanks; blank lines become " ."
        sed -e '1s/^\xef\xbb\xbf//' -e 's/[[:space:]]*$//' -e 's/^$/./' -e 's/^/ /' "$file"
    done
} >"$out.tmp"
mv "$out.tmp" "$out"
