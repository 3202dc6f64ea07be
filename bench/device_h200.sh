#!/bin/sh
# One prepared run on a machine with a real NVIDIA GPU (the H200 device of a session that is lent
# one): the push agent as a node runs it, with its benchmark, and the raw nvidia-smi outputs
# beside it. Everything lands in $OUT (or ./device-out): check the bundle here afterwards with
#   .venv/bin/python bench/device_check.py OUT/bundle.json
# Needs only python3 (PyTorch, else CuPy, for the benchmark) and nvidia-smi on the machine.
set -u
out=${OUT:-device-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{
  date -u +%FT%TZ
  nvidia-smi -L
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'
} >"$out/machine.txt" 2>&1
nvidia-smi -q -x >"$out/nvidia-smi-q.xml" 2>"$out/nvidia-smi-q.xml.err"
nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
nvidia-smi nvlink -s >"$out/nvlink-s.txt" 2>&1
# The agent: every node command, then the benchmark on each GPU (bf16 matmul, device copy,
# host<->device), timed by the agent itself.
start=$(date +%s)
python3 poc/probes/agent.py --expected-gpus 1 --benchmark --timeout 120 --output "$out/bundle.json" \
  >"$out/agent.log" 2>&1
echo "agent exit $? after $(( $(date +%s) - start )) s" >>"$out/agent.log"
# The same GPU under load: the benchmark alone while nvidia-smi reads it in the middle.
python3 poc/probes/agent.py --benchmark-only --matmul-size 8192 --output "$out/benchmark-only.json" \
  >"$out/benchmark-only.log" 2>&1 &
sleep 4
nvidia-smi -q -x >"$out/nvidia-smi-q-load.xml" 2>&1
wait
tail -n 3 "$out/agent.log" "$out/benchmark-only.log"
