#!/usr/bin/env bash
# Accuracy and training time of lucid's models next to scikit-learn 1.2.1
# (Debian python3-sklearn) and XGBoost 1.7 (libxgboost-dev, C API) on the
# same features and splits (`lucid model features` exports them).
# usage: bench/models/run.sh [BUILD_DIR] [OUT_DIR]
# Writes OUT_DIR/results.csv and prints it; single-threaded baselines
# (OMP_NUM_THREADS=1, XGB_THREADS=1) unless the environment says otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-models}
DATA=data/venus-sept
LUCID=$BUILD/lucid
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} XGB_THREADS=${XGB_THREADS:-1}
bench/models/build.sh "$BUILD" >/dev/null
RES=$OUT/results.csv
echo "table,model,metric,value,train_seconds" >"$RES"

# lucid's line: train, read the time from its report, evaluate.
lucid_line() { # table name trainargs... -- evalargs...
    local table=$1 name=$2
    shift 2
    local train=() eval=()
    while [ "$1" != -- ]; do train+=("$1"); shift; done
    shift
    eval=("$@")
    local secs
    secs=$("$LUCID" model train "${train[@]}" --out "$OUT/model.json" | sed -n 's/.* in \([0-9.]*\) s .*/\1/p')
    "$LUCID" model eval --model "$OUT/model.json" "${eval[@]}" |
        awk -v t="$table" -v n="$name" -v s="$secs" '/^model/ { print t "," n ",MAE," $5 "," s; print t "," n ",R2," $9 "," s; exit }' >>"$RES"
}

SEPT='2020-09-01 00:00:00'
MID='2020-09-15 00:00:00'
for target in submit_gpu_job submit_gpu_num; do
    table=throughput_$target
    "$LUCID" model features --kind throughput --data $DATA/throughput.csv --target $target \
        --train-until "$SEPT" --out "$OUT/$table.csv"
    for threads in 1 2; do
        lucid_line "$table" "lucid EBM (8 bags; $threads threads)" --kind throughput --data $DATA/throughput.csv \
            --target $target --train-until "$SEPT" --threads $threads -- --data $DATA/throughput.csv
    done
    "$LUCID" model eval --model "$OUT/model.json" --data $DATA/throughput.csv \
        --compare $DATA/throughput_forecast.csv --compare-column pred_${target#submit_} |
        awk -v t="$table" '/^compared/ { print t ",authors EBM (throughput_forecast.csv),MAE," $5 ","; print t ",authors EBM (throughput_forecast.csv),R2," $9 "," }' >>"$RES"
    /usr/bin/python3 bench/models/sklearn_bench.py regression "$OUT/$table.csv" | sed "s|^$OUT/||; s|\.csv,|,|" >>"$RES"
    "$BUILD/xgb_bench" regression "$OUT/$table.csv" | sed "s|^$OUT/||; s|\.csv,|,|" >>"$RES"
done

table=duration
"$LUCID" model features --kind duration --data $DATA/trace.csv --train-until "$MID" --out "$OUT/$table.csv"
lucid_line $table "lucid EBM (8 bags; 2 threads)" --kind duration --data $DATA/trace.csv --train-until "$MID" \
    -- --data $DATA/trace.csv
"$LUCID" model eval --model "$OUT/model.json" --data $DATA/trace.csv --compare $DATA/estimates_lucid.csv |
    awk '/^compared/ { print "duration,authors EBM (estimates_lucid.csv; weekly retrained),MAE," $5 ","; print "duration,authors EBM (estimates_lucid.csv; weekly retrained),R2," $9 "," }' >>"$RES"
/usr/bin/python3 bench/models/sklearn_bench.py regression "$OUT/$table.csv" | sed "s|^$OUT/||; s|\.csv,|,|" >>"$RES"
"$BUILD/xgb_bench" regression "$OUT/$table.csv" | sed "s|^$OUT/||; s|\.csv,|,|" >>"$RES"

table=sharing
"$LUCID" model features --kind sharing --data $DATA/sharing_labels.csv --out "$OUT/$table.csv"
"$LUCID" model eval --kind sharing --data $DATA/sharing_labels.csv |
    awk '/^split/ { for (i = 1; i < NF; i++) if ($i == "accuracy") print "sharing,lucid CART (alpha 1e-4),accuracy," $(i + 1) "," } /^leave-one-out/ { print "sharing,lucid CART (alpha 1e-4),leave-one-out," $3 "," }' >>"$RES"
/usr/bin/python3 bench/models/sklearn_bench.py sharing "$OUT/$table.csv" | sed "s|^$OUT/||; s|\.csv,|,|" >>"$RES"
"$BUILD/xgb_bench" sharing "$OUT/$table.csv" | sed "s|^$OUT/||; s|\.csv,|,|" >>"$RES"

column -s, -t "$RES"
