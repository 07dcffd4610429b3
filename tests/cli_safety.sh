#!/usr/bin/env bash
# cli_safety.sh — everyday mistakes must not destroy a user's files or give
# silently wrong results (issue 11): each mistake exits 1 with one line
# naming the file, and the user's file is unchanged byte for byte (sha256
# before and after); outputs are written whole or not at all (a failed run
# leaves the previous output and no temporary files); an output folder holds
# one run (MANIFEST; stale files of another run removed; `lucid report`
# refuses files the MANIFEST does not list and shows the run on the page);
# experiment files take inline comments, refuse 0x10, directories and
# duplicate policies; `lucid explain` prints dates beside trace seconds.
# Usage: cli_safety.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
bad=$src/tests/bad
data=$src/data/venus-sept

digest() { sha256sum "$@" | awk '{ print $1 }'; }
# unchanged DESCRIPTION FILE SHA: the file still has that digest.
unchanged() { check "$1: $2 unchanged" [ "$(digest "$2")" = "$3" ]; }
no_temporaries() { check "$1: no temporary files left in $2" bash -c "! ls -A '$2' | grep -q '\.tmp$'"; }

cd "$tmp" || exit 1
cat >experiment.ini <<EOF
# my experiment: comments must survive
[trace]
jobs = $bad/good.csv   # the trace, with an inline comment
vcs = $bad/vcs.csv ; a ';' comment

[simulate]
policies = fifo,sjf   # two policies
EOF
exp_sum=$(digest experiment.ini)

# Inline comments are not part of the values: the experiment runs.
check "inline comments" "$lucid" simulate experiment.ini --quiet --out first --series
check "inline comments: the saved experiment has clean paths" grep -qx "jobs = $bad/good.csv" first/experiment.ini

# simulate --out . would replace the experiment itself (it is ./experiment.ini).
expect_error "simulate --out over the experiment" "experiment.ini: is the input experiment" \
    "$lucid" simulate experiment.ini --quiet --out .
unchanged "simulate --out ." experiment.ini "$exp_sum"
# ... and a folder holding the user's own experiment.ini (not one simulate wrote).
mkdir -p mine && cp experiment.ini mine/experiment.ini && cp experiment.ini other.ini
expect_error "simulate into a folder with the user's experiment.ini" \
    "mine/experiment.ini: exists and was not written by lucid simulate" \
    "$lucid" simulate other.ini --quiet --out mine
unchanged "simulate --out mine" mine/experiment.ini "$exp_sum"

# tune --out X.ini where X.ini is the experiment: refused before searching.
expect_error "tune --out over the experiment" "experiment.ini: is the input experiment" \
    "$lucid" tune experiment.ini --out experiment.ini
unchanged "tune --out X.ini" experiment.ini "$exp_sum"
ln -s experiment.ini link.ini
expect_error "tune --out through a symlink" "link.ini: is the input experiment" \
    "$lucid" tune experiment.ini --out link.ini
unchanged "tune --out link" experiment.ini "$exp_sum"
# ... or the trace.
cp "$bad/good.csv" trace.csv
sed "s|$bad/good.csv|$tmp/trace.csv|" experiment.ini >t.ini
trace_sum=$(digest trace.csv)
expect_error "tune --out over the trace" "trace.csv: is the input jobs" "$lucid" tune t.ini --out trace.csv
unchanged "tune --out trace" trace.csv "$trace_sum"

# model predict --out equal to --data.
"$lucid" model train --kind sharing --data "$data/sharing_labels.csv" --out share.json >/dev/null ||
    fail "train sharing"
cp "$data/sharing_labels.csv" labels.csv
labels_sum=$(digest labels.csv)
expect_error "predict --out over --data" "labels.csv: is the input --data" \
    "$lucid" model predict --model share.json --data labels.csv --out labels.csv
unchanged "predict --out = --data" labels.csv "$labels_sum"
ln labels.csv hardlink.csv
expect_error "predict --out a hard link of --data" "hardlink.csv: is the input --data" \
    "$lucid" model predict --model share.json --data labels.csv --out hardlink.csv
unchanged "predict --out hard link" labels.csv "$labels_sum"
model_sum=$(digest share.json)
expect_error "train --out over --data" "labels.csv: is the input --data" \
    "$lucid" model train --kind sharing --data labels.csv --out labels.csv
unchanged "train --out = --data" labels.csv "$labels_sum"
check "predict writes whole" "$lucid" model predict --model share.json --data labels.csv \
    --pairs "$data/colocation_pairs.csv" --out pred.csv
no_temporaries "predict" .
unchanged "predict" share.json "$model_sum"

# A second run into the same folder never deletes results it did not
# produce: a run without sjf is refused while first/ holds sjf's results
# (issue 25); a run of the same policies without --series replaces them and
# removes their earlier series, saying so.
sjf_sum=$(digest first/jobs-sjf.csv)
expect_error "rerun without a policy of the folder" "results of policy sjf from an earlier run, which this run does not simulate" \
    "$lucid" simulate experiment.ini --quiet --out first --policies fifo
unchanged "the other policy's results" first/jobs-sjf.csv "$sjf_sum"
policies=$(sed -n 's/^policies = //p' first/MANIFEST)
"$lucid" simulate experiment.ini --quiet --out first --policies "$policies" 2>stale.log || fail "second simulate"
check "stale series removed" bash -c "! ls first/series-*.csv 2>/dev/null | grep -q ."
check "removal reported" grep -q "removed .*first/series-fifo.csv (a file of another run)" stale.log
rm -f first/jobs-[!f]*.csv first/series-*.csv first/eta-[!f]*.csv
"$lucid" simulate experiment.ini --quiet --out first --policies fifo 2>stale.log || fail "second simulate, fifo"
check "MANIFEST names the trace" grep -qx "input = jobs $bad/good.csv xxh64:[0-9a-f]*" first/MANIFEST
check "MANIFEST names the semantics" grep -qx "semantics = fixed" first/MANIFEST
check "MANIFEST names the policies" grep -qx "policies = fifo" first/MANIFEST
check "MANIFEST has the knobs" grep -q "^knobs = profiler_nodes=2 profiler_time_limit=200" first/MANIFEST
check "MANIFEST lists the files" grep -q "^file = jobs-fifo.csv xxh64:" first/MANIFEST

# A failed simulate leaves the previous outputs as they were.
before=$(cd first && digest summary.csv jobs-fifo.csv experiment.ini MANIFEST)
expect_error "failed simulate" "negative_duration.csv:3: duration" \
    "$lucid" simulate experiment.ini --quiet --out first --jobs "$bad/negative_duration.csv"
check "failed simulate keeps the outputs" [ "$(cd first && digest summary.csv jobs-fifo.csv experiment.ini MANIFEST)" = "$before" ]
no_temporaries "failed simulate" first

# report: the page shows the run; a bad --model keeps the previous page.
check "report" bash -c "'$lucid' report first >/dev/null"
check "page shows the trace" grep -q "$bad/good.csv" first/report.html
check "page shows the semantics" grep -q "<td>semantics</td><td[^>]*><code>fixed</code>" first/report.html
check "page shows the knobs" grep -q "profiler_time_limit=200" first/report.html
page_sum=$(digest first/report.html)
echo '{"format": "something-else"}' >bad.json
expect_error "report --model bad.json" "bad.json" "$lucid" report first --model bad.json
unchanged "failed report" first/report.html "$page_sum"
no_temporaries "failed report" first
expect_error "report --out over its input" "first/summary.csv: is one of the inputs" \
    "$lucid" report first --out first/summary.csv
# A file of another run (or an edited one) is refused, not mixed in.
"$lucid" simulate experiment.ini --quiet --out second --policies fifo --series || fail "simulate second"
cp second/series-fifo.csv first/
expect_error "report: a file the MANIFEST does not list" "first/series-fifo.csv: not written by the run" \
    "$lucid" report first --out mixed.html
rm first/series-fifo.csv
sed -i 's/^summary/summary/; 2s/,2,/,3,/' first/summary.csv
expect_error "report: an edited file" "first/summary.csv: changed since the run" "$lucid" report first --out mixed.html
check "no page written for refused runs" [ ! -e mixed.html ]
# A new run into the folder keeps the old run's page (the user's) and says
# it shows the earlier run; nor does it touch a report.html lucid did not write.
"$lucid" simulate experiment.ini --quiet --out first --policies fifo 2>stale2.log || fail "third simulate"
unchanged "a new run keeps the old report" first/report.html "$page_sum"
check "... and says it is stale" grep -q "first/report.html shows the earlier run; run .lucid report .*first. again" stale2.log
echo '<html>my notes</html>' >second/report.html
notes_sum=$(digest second/report.html)
"$lucid" simulate experiment.ini --quiet --out second 2>/dev/null || fail "simulate over notes"
unchanged "a user's report.html" second/report.html "$notes_sum"

# Experiment files: directories, duplicate policies, non-decimal numbers.
expect_error "directory as experiment" "first: is a directory, not an experiment file" \
    "$lucid" simulate first --quiet
expect_error "duplicate policies" "policy 'fifo' is listed twice" \
    "$lucid" simulate experiment.ini --quiet --out dup --policies fifo,fifo
printf '[simulate]\npolicies = sjf,fifo,sjf\n' >dup.ini
expect_error "duplicate policies in a file" "dup.ini:2: [simulate] policies: policy 'sjf' is listed twice" \
    "$lucid" simulate dup.ini --quiet
printf '[trace]\njobs = %s\nvcs = %s\n[lucid]\nprofiler_time_limit = 0x10\n' "$bad/good.csv" "$bad/vcs.csv" >hex.ini
expect_error "hexadecimal integer" "hex.ini:5: [lucid] profiler_time_limit: '0x10' is not an integer" \
    "$lucid" simulate hex.ini --quiet
printf '[lucid]\npriority_ratio = 0x2\n' >hexd.ini
expect_error "hexadecimal number" "hexd.ini:2: [lucid] priority_ratio: '0x2' is not a positive number" \
    "$lucid" simulate hexd.ini --quiet
expect_error "hexadecimal flag" "--threads: [simulate] threads: '0x10' is not an integer" \
    "$lucid" simulate experiment.ini --quiet --threads 0x10
check "no output folder for refused runs" [ ! -e dup ]

# explain: UTC dates beside the trace's seconds.  Job 766065's row in the
# Venus trace: submit_time 13274828, submit_datetime 2020-09-01 15:29:39
# (the first job, 13219203, is at 2020-09-01 00:02:34).
(cd "$src" && "$lucid" simulate examples/venus.ini --quiet --policies fifo --out "$tmp/venus") ||
    fail "simulate venus"
"$lucid" explain "$tmp/venus" 766065 >explain.txt || fail "explain"
check "explain: submit date" grep -q "^job 766065: VC vcJsw, 8 GPUs, submitted at 13274828 (2020-09-01 15:29:39 UTC)" explain.txt
check "explain: end date" grep -Eq "^ended at [0-9]+ \(2020-09-[0-9]{2} [0-9:]{8} UTC\): JCT" explain.txt

finish cli_safety
