#!/bin/sh
cd /work/wt/hunt
for job in "5000 oracle hunt/test_hunt_oracle.py" \
           "3000 hunt_iv_duckdb hunt/test_hunt_intervals.py" \
           "5000 rewrite_python tests/test_rewrite.py -k python" \
           "400 rewrite_duckdb tests/test_rewrite.py -k duckdb" ; do
  set -- $job
  n=$1; log=$2; shift 2
  start=$(date +%s)
  hunt/run.sh $n $log "$@"
  echo "$log rc=$? secs=$(( $(date +%s) - start ))" >> hunt/logs/queue.txt
done
