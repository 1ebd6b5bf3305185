#!/usr/bin/env bash
# FGD vs best-fit vs binpack under workload inflation (docs/results-openb.md): unallocated GPUs at 90, 95 and
# 100% arrived demand per openb variant and seed, and FGD's reduction against each baseline.
# Usage: bench/sim/inflation-seeds.sh [VARIANTS] [SEEDS] [EXTRA]   (default: "default gpuspec33 multigpu50" "1 2 3 42" "")
# EXTRA: more simulate options, e.g. --ignore-host (GPUs alone, as before host CPU and memory were modelled).
# The openb lists are read from $TRACES/alibaba-openb (docs/traces.md; default TRACES: $GPUPOOL_TRACES, else ../shared/traces beside the checkout).
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
VARIANTS="${1:-default gpuspec33 multigpu50}"
SEEDS="${2:-1 2 3 42}"
EXTRA="${3:-}"
T="$TRACES/alibaba-openb"
[ -d "$T" ] || { echo "$T not found: download the openb lists as docs/traces.md says (\"Getting the real traces\") and set TRACES to their folder" >&2; exit 2; }
printf '%-11s %4s %7s %8s %8s %8s %12s %12s\n' variant seed arrived fgd best-fit binpack "fgd vs bf" "fgd vs bp"
for v in $VARIANTS; do
  for seed in $SEEDS; do
    ./gpupool simulate --mode inflation --trace-format openb --trace "$T/openb_pod_list_$v.csv" \
        --nodes "$T/openb_node_list_gpu_node.csv" --placement fgd,best-fit,binpack --seed "$seed" --quiet --output csv $EXTRA |
    awk -F, -v v="$v" -v seed="$seed" '
      NR > 1 { p = $1; a = $2 + 0; u = $4 + 0; k = int(a)
               if ((k == 90 || k == 95 || k == 100) && !((p, k) in seen)) { seen[p, k] = 1; un[p, k] = u } }
      END { for (i = 0; i < 3; i++) { k = 90 + 5 * i
              f = un["fgd", k]; b = un["best-fit", k]; q = un["binpack", k]
              printf "%-11s %4s %6d%% %8.1f %8.1f %8.1f %11.1f%% %11.1f%%\n", v, seed, k, f, b, q, 100 * (f - b) / b, 100 * (f - q) / q } }'
  done
done
