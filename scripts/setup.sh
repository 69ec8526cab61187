#!/usr/bin/env bash
# Installs everything benchlab needs on a fresh Debian machine, idempotently:
# Debian packages (only those missing), uv (the lock-file installer), and the locked
# Python environment in .venv. Called by `make demo` and `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
have cc        || need_pkgs+=(gcc libc6-dev)
have make      || need_pkgs+=(make)
have stress-ng || need_pkgs+=(stress-ng)
have hyperfine || need_pkgs+=(hyperfine)
have numactl   || need_pkgs+=(numactl)
have taskset   || need_pkgs+=(util-linux)
have perf      || need_pkgs+=(linux-perf)
have valgrind  || need_pkgs+=(valgrind)
have chromium  || need_pkgs+=(chromium)
[[ -x /usr/sbin/sshd ]] || need_pkgs+=(openssh-server)  # tests/cluster: SSHCluster to this machine
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_pkgs+=(postgresql)  # tests/store: team store
if ((${#need_pkgs[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing Debian packages: ${need_pkgs[*]}; run: sudo apt-get install -y ${need_pkgs[*]}" >&2
    exit 2
  fi
  echo "setup: installing Debian packages: ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # linux-perf is optional (no hardware counters in many VMs): do not fail the setup for it.
  apt-get install -y -qq "${need_pkgs[@]}" >/dev/null || {
    rest=(); for p in "${need_pkgs[@]}"; do [[ $p == linux-perf ]] || rest+=("$p"); done
    ((${#rest[@]})) && apt-get install -y -qq "${rest[@]}" >/dev/null
  }
fi

PY=${PYTHON:-python3}
if ! have uv; then
  echo "setup: installing uv (the lock-file installer) from PyPI"
  "$PY" -m pip install -q uv 2>/dev/null || "$PY" -m pip install -q --break-system-packages uv
fi
UV=$(command -v uv || echo "$("$PY" -m site --user-base)/bin/uv")
# --frozen: install exactly what uv.lock says; never re-resolve on a user's machine.
"$UV" sync --frozen --compile-bytecode --python "$PY" -q
# The project itself is installed editable (src/ is not in site-packages): compile it too, so an
# environment with PYTHONDONTWRITEBYTECODE=1 does not recompile every module on every command.
.venv/bin/python -m compileall -q -j 0 src >/dev/null
