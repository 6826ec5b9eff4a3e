#!/bin/sh
# Prints the scenario `rebalance-sim bench scale` runs (scale_scenario() in
# tools/bench/scale_bench.cpp: one group of N consumers on one topic of P partitions, 3 brokers,
# 1 record/s per partition, everyone started in the first second, 1 % crashing and coming back
# 10 s later in the second quarter, a graceful rolling restart of 10 % in the last fifth), with
# the three protocols of the classic and the consumer group in one file. The PGO build's training
# (tools/pgo/train.sh) runs it through `run`: `bench scale` runs each size in a forked child that
# leaves with _exit, which writes no profile.
# Usage: tools/pgo/scale_scenario.sh CONSUMERS PARTITIONS VIRTUAL_MS
set -eu
n=$1 p=$2 v=$3
printf '{"name":"scale-%sx%s","seed":1,"duration_ms":%s,' "$n" "$p" "$v"
printf '"protocols":["classic-eager","classic-cooperative","consumer"],"cluster":{"brokers":3},'
printf '"topics":[{"name":"t","partitions":%s,"produce":{"records_per_sec":1}}],"consumers":[' "$p"
i=0
while [ "$i" -lt "$n" ]; do
  [ "$i" -gt 0 ] && printf ','
  printf '{"name":"c%s","group":"g","topics":["t"]}' "$i"
  i=$((i + 1))
done
printf '],"events":['
i=0
while [ "$i" -lt "$n" ]; do
  [ "$i" -gt 0 ] && printf ','
  printf '{"at_ms":%s,"do":"start","consumer":"c%s"}' $((100 + i * 900 / n)) "$i"
  i=$((i + 1))
done
crashes=$((n / 100))
[ "$crashes" -lt 1 ] && crashes=1
k=0
while [ "$k" -lt "$crashes" ]; do
  printf ',{"at_ms":%s,"do":"restart","consumer":"c%s","after_ms":10000,"graceful":false}' \
    $((v / 4 + k * (v / 4) / crashes)) $((k * 97 % n))
  k=$((k + 1))
done
rolling=$((n / 10))
[ "$rolling" -lt 1 ] && rolling=1
k=0
while [ "$k" -lt "$rolling" ]; do
  printf ',{"at_ms":%s,"do":"restart","consumer":"c%s","after_ms":5000,"graceful":true}' \
    $((v * 4 / 5 + k * 200 % (v / 10))) $(((n - 1 - k * 7 % n + n) % n))
  k=$((k + 1))
done
printf ']}\n'
