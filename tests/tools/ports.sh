# unused_port: prints a loopback port that nothing listens on, drawn below
# the kernel's ephemeral range. A test that names a port before binding it
# must not draw from that range: every outgoing connection of the tests
# beside it (thousands for the fuzz and stress tests, many left in
# TIME_WAIT) holds a port there, and binding one of those fails even with
# SO_REUSEADDR.
unused_port() {
  local low _ port
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
  [ "$low" -gt 2048 ] || { echo "the ephemeral range starts at $low" >&2; return 1; }
  for _ in $(seq 1 50); do
    port=$((1024 + (RANDOM * 32768 + RANDOM) % (low - 1024)))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
  done
  echo "no unused port below $low" >&2; return 1
}
