#!/bin/sh
cd /work/wt/hunt
while [ "$(wc -l < hunt/logs/queue.txt)" -lt 12 ]; do sleep 10; done
run() { n=$1; log=$2; shift 2; start=$(date +%s); hunt/run.sh $n $log "$@"; echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt; }
run 2000 hunt_windows hunt/test_hunt_windows.py
