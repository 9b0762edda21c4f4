#!/bin/sh
# after queue2 (9 lines in queue.txt), in priority order, sized to finish by ~20:45
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 9 ]; do sleep 5; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
run 1500 hunt_iv_duckdb2 hunt/test_hunt_intervals.py
run 800 hunt_dups hunt/test_hunt_dups.py
run 800 hunt_windows hunt/test_hunt_windows.py
HUNT_OPT=--hunt-scale run 2 iv_sweeps tests/test_interval_sweeps.py -k "not spark"
HUNT_OPT=--hunt-scale run 3 iv_files2 tests/test_intervals.py tests/test_sweep_summary.py tests/test_engine_fast_paths.py -k "not spark"
HUNT_ENGINES=spark SIRA_SPARK_PARTITIONS=3 run 10 hunt_iv_spark hunt/test_hunt_intervals.py
HUNT_ENGINES=spark SIRA_SPARK_PARTITIONS=4 run 8 window_defs_spark hunt/test_hunt_window_defs.py
