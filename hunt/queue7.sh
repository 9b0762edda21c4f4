#!/bin/sh
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 17 ]; do sleep 10; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
HUNT_OPT=--hunt-scale run 4 iv_files2 tests/test_intervals.py tests/test_sweep_summary.py tests/test_engine_fast_paths.py -k "not spark"
HUNT_OPT=--hunt-scale run 3 iv_sweeps tests/test_interval_sweeps.py -k "not spark"
