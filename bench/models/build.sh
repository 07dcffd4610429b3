#!/usr/bin/env bash
# Builds the XGBoost baseline (needs libxgboost-dev) against a lucid build
# tree's liblucid.a.  Not part of the default build or of CI.
# usage: bench/models/build.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
[ -f "$BUILD/liblucid.a" ] || { echo "build lucid first: $BUILD/liblucid.a is missing" >&2; exit 1; }
pkg-config --exists xgboost || { echo "libxgboost-dev is not installed" >&2; exit 1; }
cc -std=c11 -O2 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -Iinclude bench/models/xgb_bench.c \
    "$BUILD/liblucid.a" $(pkg-config --cflags --libs xgboost jansson) -lm -lpthread \
    -o "$BUILD/xgb_bench"
echo "$BUILD/xgb_bench"
