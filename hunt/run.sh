#!/bin/sh
# usage: hunt/run.sh N LOGNAME pytest-args...
cd /work/wt/hunt
HUNT_OPT=${HUNT_OPT:---hunt-n}
N=$1; LOG=$2; shift 2
PYTHONPATH=$PWD:$PWD/tests PYSPARK_PYTHON=/work/main/.venv/bin/python PYSPARK_DRIVER_PYTHON=/work/main/.venv/bin/python SPARK_LOCAL_IP=127.0.0.1 \
  /work/main/.venv/bin/python -m pytest -p no:cacheprovider -p hunt.plugin $HUNT_OPT $N -q "$@" > hunt/logs/$LOG.log 2>&1
