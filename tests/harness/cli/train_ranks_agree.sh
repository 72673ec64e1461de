# Ranks agree or stop (docs/distributed.md, "Ranks agree or stop"), two ranks started by hand on
# this machine as torchrun would start them:
# a. configs that differ (model.n_layer): both ranks exit 2 naming the key and both values, before
#    any training (they used to abort in a collective of mismatched shapes);
# b. different training data (data.train): both exit 2 naming it (they used to train and exit 0);
# c. a process joining a running job as a rank the job already has is refused at once (exit 2), and
#    the job trains on;
# d. a MASTER_PORT held by something that is not a rank store (a server that answers with bytes of
#    its own) is never an abort: LibTorch 1.13's client reads the bytes and exit 2 names the
#    address; 2.11's rejects them and retries, and the rank exits 1 after --dist-timeout, as where
#    nothing listens.
source "$(dirname "$0")/train_fixture.bash"
copy_task_shard "$WORK/train.bin" 400 1
copy_task_shard "$WORK/other.bin" 400 3
copy_task_shard "$WORK/val.bin" 50 2
write_config
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2
unset RANK LOCAL_RANK SLURM_PROCID TORCHELASTIC_RESTART_COUNT

pids=()
cleanup() { kill -9 "${pids[@]}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# rank N OUT ARGS...: rank N of 2 in the background, stdout and stderr in OUT.{out,err}; $! its pid.
rank() {
  local n=$1 out=$2; shift 2
  RANK=$n LOCAL_RANK=$n "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/run" --quiet \
    --dist-timeout 20 "$@" > "$out.out" 2> "$out.err" &
}
# both_refused PATTERN ARGS0 -- ARGS1: ranks 0 and 1 with their own --set arguments both exit 2,
# their messages matching PATTERN, and no run folder holds a checkpoint.
both_refused() {
  local pattern=$1; shift
  local a=() b=()
  while [[ $1 != -- ]]; do a+=("$1"); shift; done; shift; b=("$@")
  export MASTER_PORT; MASTER_PORT=$(free_port)
  rm -rf "$WORK/run"
  rank 0 "$WORK/r0" "${a[@]}"; local p0=$!
  rank 1 "$WORK/r1" "${b[@]}"; local p1=$!
  pids+=("$p0" "$p1")
  local rc0=0 rc1=0
  wait "$p0" || rc0=$?
  wait "$p1" || rc1=$?
  for r in 0 1; do
    local rc; rc=$([[ $r == 0 ]] && echo $rc0 || echo $rc1)
    [[ $rc == 2 ]] || { echo "FAIL: rank $r exit $rc, expected 2"; cat "$WORK/r$r.err"; exit 1; }
    grep -q -- "$pattern" "$WORK/r$r.err" || { echo "FAIL: rank $r: no '$pattern'"; cat "$WORK/r$r.err"; exit 1; }
  done
  [[ ! -e "$WORK/run/checkpoint" ]] || { echo "FAIL: a refused job wrote a checkpoint"; exit 1; }
}

# a. a differing config key
both_refused "model.n_layer = 3 on rank 1, 2 on rank 0" -- --set model.n_layer=3
# b. different training data
both_refused "data.train (contents) = " -- --set "data.train=$WORK/other.bin"

# c. a second process as rank 1 of a running job
export MASTER_PORT; MASTER_PORT=$(free_port)
rm -rf "$WORK/run"
rank 0 "$WORK/j0" --set train.steps=100000; j0=$!
rank 1 "$WORK/j1" --set train.steps=100000; j1=$!
pids+=("$j0" "$j1")
for _ in $(seq 100); do [[ -s "$WORK/run/metrics.jsonl" ]] && break; sleep 0.2; done
[[ -s "$WORK/run/metrics.jsonl" ]] || { echo "FAIL: the job did not start"; cat "$WORK/j0.err"; exit 1; }
SECONDS=0
expect_fail 2 "another process already joined this job's rendezvous as rank 1" \
  env RANK=1 LOCAL_RANK=1 "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/intruder" \
  --quiet --dist-timeout 20
(( SECONDS < 10 )) || { echo "FAIL: the intruder was refused after ${SECONDS} s"; exit 1; }
kill -0 "$j0" && kill -0 "$j1" || { echo "FAIL: the job stopped"; cat "$WORK/j0.err" "$WORK/j1.err"; exit 1; }
kill -9 "$j0" "$j1"

# d. a port held by another program, and a port where nothing listens
MASTER_PORT=$(free_port)
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept(); c.sendall(b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 5000); c.close()
' "$MASTER_PORT" &
pids+=("$!")
for _ in $(seq 50); do python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])))' "$MASTER_PORT" 2>/dev/null && break; sleep 0.1; done
rc=0
RANK=1 LOCAL_RANK=1 "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/g" --quiet \
  --dist-timeout 3 > "$WORK/out" 2> "$WORK/err" || rc=$?
case $rc in
  2) grep -q "what listens at 127.0.0.1:$MASTER_PORT does not answer as a rank store" "$WORK/err" ;;
  1) grep -q "no rank store answered within the 3 s timeout" "$WORK/err" ;;
  *) false ;;
esac || { echo "FAIL: a stranger on MASTER_PORT gave exit $rc"; cat "$WORK/err"; exit 1; }
MASTER_PORT=$(free_port)
expect_fail 1 "no rank store answered within the 2 s timeout" \
  env RANK=1 LOCAL_RANK=1 "$ATTNBENCH" train --config "$WORK/run.toml" --out "$WORK/g" --quiet \
  --dist-timeout 2
echo "ok"
