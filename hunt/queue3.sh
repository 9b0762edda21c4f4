#!/bin/sh
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 9 ]; do sleep 10; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
run 1500 hunt_dups hunt/test_hunt_dups.py
HUNT_ENGINES=spark SIRA_SPARK_PARTITIONS=3 run 25 hunt_iv_spark hunt/test_hunt_intervals.py
run 10000 oracle2 hunt/test_hunt_oracle.py
