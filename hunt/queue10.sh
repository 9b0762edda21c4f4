#!/bin/sh
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 16 ]; do sleep 5; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
run 1500 hunt_iv_duckdb3 hunt/test_hunt_intervals.py
run 800 hunt_windows2 hunt/test_hunt_windows.py
HUNT_OPT=--hunt-scale run 3 live2 tests/test_live_properties.py -k "not spark"
HUNT_OPT=--hunt-scale run 3 windows2 tests/test_duckdb_windows.py tests/test_windowby.py tests/test_spl.py -k "not spark"
