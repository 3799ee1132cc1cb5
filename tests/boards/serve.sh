#!/bin/sh
# What the networked board runs (scripts/board.sh virt) once dropbear is up: nothing but
# waiting, while the host reaches it over ssh (make deploy, scripts/fleet.sh), until the
# host touches /tmp/stop (or ten minutes pass).
n=0
while [ ! -e /tmp/stop ] && [ $n -lt 600 ]; do
    sleep 1
    n=$((n + 1))
done
echo "== $(hostname): checks done =="
