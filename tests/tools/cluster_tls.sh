#!/usr/bin/env bash
# TLS between a front and a worker through CAF's OpenSSL module, both sides
# with certificates of one CA (openssl makes them here): a worker bound
# beyond loopback serves a TLS front; a worker whose certificate another CA
# signed, a front whose certificate does not verify and a front without TLS
# are each refused while the good front goes on serving; only some of the
# three TLS files is an error.
#   cluster_tls.sh SERVE MODEL_DIR
set -euo pipefail
serve=$1 model=$2
. "$(dirname "$0")/cluster_lib.sh"
cd "$logs"
subject() { openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null; }
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj "/CN=kvactor test CA" 2>/dev/null
for n in front worker; do
  subject $n
  openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $n.pem -days 1 2>/dev/null
done
openssl req -x509 -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.pem -days 1 -subj "/CN=rogue" 2>/dev/null
tls() { echo --openssl.certificate="$1.pem" --openssl.key="$1.key" --openssl.cafile="${2:-ca}.pem"; }
common=(--model="$model" --kv-cache-mib=16 --threads=1)

rc=0
"$serve" "${common[@]}" --worker-port=0 --openssl.certificate=worker.pem >out 2>&1 || rc=$?
cat out
[ "$rc" -eq 2 ] && grep -q 'needs all of --openssl.certificate' out

# A worker on every address, with TLS; a front with TLS.
start w "${common[@]}" --worker-port=0 --worker-bind=0.0.0.0 $(tls worker)
wait_for w 'kvactor worker on 0.0.0.0:[0-9]* \(TLS\)'
port=$(sed -n 's/.*kvactor worker on 0.0.0.0:\([0-9]*\) (TLS)$/\1/p' "$logs/w")
start front --model="$model" --port=0 --workers="127.0.0.1:$port" $(tls front)
front=$(listen_port front)
wait_live "$front" 1
serves() { # serves ROUND: the good front answers four requests in full
  for i in 1 2 3 4; do
    echo "{\"op\":\"generate\",\"id\":\"t$1$i\",\"prompt\":\"over TLS $i\",\"max_tokens\":16}"
  done >"$logs/req"
  [ "$(batch "$front" "$logs/req" | grep -c '"finish_reason":"max_tokens"')" -eq 4 ]
}
serves 0

# Refused: a worker whose certificate the front's CA did not sign, a front
# whose certificate the worker's CA did not sign, a front without TLS. The
# refused fronts keep trying (every 500 ms) while the good front serves: a
# refused handshake must not cost the worker its good connections.
start rogue "${common[@]}" --worker-port=0 $(tls rogue rogue)
rport=$(worker_port rogue)
start f1 --model="$model" --port=0 --workers="127.0.0.1:$rport" $(tls front)
start f2 --model="$model" --port=0 --workers="127.0.0.1:$port" $(tls rogue)
start f3 --model="$model" --port=0 --workers="127.0.0.1:$port"
for f in f1 f2 f3; do wait_for $f "down: cannot connect"; done
for round in 1 2 3; do serves $round; sleep 0.5; done
for f in f1 f2 f3; do
  p=$(listen_port $f)
  echo '{"op":"generate","id":"r1","prompt":"anyone?","max_tokens":3}' >"$logs/req"
  batch "$p" "$logs/req" | grep -q '"code":"overloaded"'
  grep -q 'joined' "$logs/$f" && { echo "$f joined a worker it must not reach"; exit 1; }
  stop $f
done
if grep -q 'lost' "$logs/front"; then
  echo "the good front lost its worker while others were refused:"; cat "$logs/front"; exit 1
fi
stop rogue
stop front
stop w
