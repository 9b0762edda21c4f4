#!/bin/sh
# waits for queue1 (4 jobs), then runs these one at a time
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 4 ]; do sleep 10; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
run 30 diff_spark tests/test_differential.py -k spark
HUNT_OPT=--hunt-scale run 10 iv_files tests/test_interval_sweeps.py tests/test_intervals.py tests/test_sweep_summary.py tests/test_engine_fast_paths.py
HUNT_OPT=--hunt-scale run 10 dups tests/test_duplicates.py -k "not spark"
HUNT_OPT=--hunt-scale run 8 live tests/test_live_properties.py tests/test_live_fused.py tests/test_live.py -k "not spark"
HUNT_OPT=--hunt-scale run 10 windows tests/test_windows.py tests/test_windowby.py tests/test_spl.py tests/test_duckdb_windows.py tests/test_live_windowtables.py tests/test_live_spl_windowby.py -k "not spark"
