#!/bin/sh
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 13 ]; do sleep 10; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
run 3000 hunt_iv_duckdb2 hunt/test_hunt_intervals.py
HUNT_ENGINES=spark SIRA_SPARK_PARTITIONS=4 run 20 hunt_windows_spark hunt/test_hunt_windows.py
