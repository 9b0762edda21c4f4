#!/bin/sh
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 15 ]; do sleep 10; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
HUNT_ENGINES=spark SIRA_SPARK_PARTITIONS=3 run 15 window_defs_spark hunt/test_hunt_window_defs.py
HUNT_ENGINES=spark SIRA_SPARK_PARTITIONS=3 run 25 hunt_dups_spark hunt/test_hunt_dups.py
