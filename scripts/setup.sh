#!/usr/bin/env bash
# Installs everything benchlab needs on a fresh Debian machine, idempotently:
# Debian packages (only those missing), uv (the lock-file installer), and the locked
# Python environment in .venv. Called by `make demo` and `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
check_python() {  # one line and exit 2 for a Python older than 3.11
  if ! "${PYTHON:-python3}" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "setup: benchlab needs Python >= 3.11, ${PYTHON:-python3} is $("${PYTHON:-python3}" -c 'import platform; print(platform.python_version())'); install python3.11 or set PYTHON=/path/to/python3.11" >&2
    exit 2
  fi
}
# A Python that is there but too old stops the setup before anything is installed.
if have "${PYTHON:-python3}"; then check_python; fi
have cc        || need_pkgs+=(gcc libc6-dev)
have make      || need_pkgs+=(make)
have git       || need_pkgs+=(git)            # benchlab ab/bisect build revisions in git worktrees
have openssl   || need_pkgs+=(openssl)        # docs/cluster.md's certificate recipe (tested verbatim)
have pgrep     || need_pkgs+=(procps)         # tests check that no process is left behind
have stress-ng || need_pkgs+=(stress-ng)
have hyperfine || need_pkgs+=(hyperfine)
have numactl   || need_pkgs+=(numactl)
have taskset   || need_pkgs+=(util-linux)
have perf      || need_pkgs+=(linux-perf)
have valgrind  || need_pkgs+=(valgrind)
# The benchmark harnesses that `--harness` reads, run for real by tests/harnesses:
have g++       || need_pkgs+=(g++)
[[ -f /usr/include/benchmark/benchmark.h ]] || need_pkgs+=(libbenchmark-dev)  # Google Benchmark
{ have go || [[ -x /usr/local/go/bin/go ]]; } || need_pkgs+=(golang-go)  # go test -bench (>= 1.20 for go -C)
{ have cargo || [[ -x $HOME/.cargo/bin/cargo ]]; } || need_pkgs+=(cargo)          # criterion.rs (its crate comes from crates.io)
{ have javac && have mvn; } || need_pkgs+=(default-jdk-headless maven)  # JMH (its jars come from Maven Central)
have pipx      || need_pkgs+=(pipx)           # docs/ci.md's CI recipes install benchlab with it
{ have bwrap && have firejail && have podman && have runc && have busybox; } || need_pkgs+=(bubblewrap firejail podman runc busybox-static)  # isolation levels
have chromium  || need_pkgs+=(chromium)
[[ -x /usr/sbin/sshd ]] || need_pkgs+=(openssh-server)  # tests/cluster: SSHCluster to this machine
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_pkgs+=(postgresql)  # tests/store: team store
have "${PYTHON:-python3}" || need_pkgs+=(python3)
# Without uv and without pip, uv is installed into a venv: Debian's python3 needs python3-venv.
if ! have uv && ! "${PYTHON:-python3}" -c 'import ensurepip' 2>/dev/null; then need_pkgs+=(python3-venv); fi
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

# Python: Debian 12's python3 (3.11) has no pip and, without python3-venv, no ensurepip.
PY=${PYTHON:-python3}
if ! have "$PY"; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: no $PY; run: sudo apt-get install -y python3 python3-venv" >&2; exit 2
  fi
  echo "setup: installing python3"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
fi
check_python

# uv (the lock-file installer): on PATH, else in its own venv in the user's cache, made with
# pip where python3 has it, else with python3 -m venv (Debian's python3-venv gives ensurepip).
UV_HOME=${XDG_CACHE_HOME:-$HOME/.cache}/benchlab/uv-venv
UV=$(command -v uv || true)
[[ -z $UV && -x $UV_HOME/bin/uv ]] && UV=$UV_HOME/bin/uv
if [[ -z $UV ]]; then
  if ! "$PY" -c 'import ensurepip' 2>/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "setup: $PY cannot make a venv (no ensurepip); run: sudo apt-get install -y python3-venv" >&2
      exit 2
    fi
    echo "setup: installing python3-venv (to install uv without a system pip)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  echo "setup: installing uv (the lock-file installer) from PyPI into $UV_HOME"
  "$PY" -m venv "$UV_HOME"
  "$UV_HOME/bin/python" -m pip install -q --disable-pip-version-check uv
  UV=$UV_HOME/bin/uv
fi
# --frozen: install exactly what uv.lock says; never re-resolve on a user's machine.
# --all-extras: developers get every command (report, cluster, postgres, notebook); the dev
# group (pytest, ruff, ...) is uv's default.
"$UV" sync --frozen --all-extras --compile-bytecode --python "$PY" -q
# The project itself is installed editable (src/ is not in site-packages): compile it too, so an
# environment with PYTHONDONTWRITEBYTECODE=1 does not recompile every module on every command.
.venv/bin/python -m compileall -q -j 0 src >/dev/null

# JMH 1.37 and Maven's plugins into ~/.m2: tests/harnesses' JMH project builds once, then offline.
if [[ ! -d $HOME/.m2/repository/org/openjdk/jmh/jmh-core/1.37 ]]; then
  jmh_tmp=$(mktemp -d); cp -r tests/harnesses/jmh_project/. "$jmh_tmp"
  mvn -q -B -f "$jmh_tmp/pom.xml" package >/dev/null \
    || echo "setup: mvn could not fetch JMH from Maven Central; the JMH tests will skip (and fail under CI=true)" >&2
  rm -rf "$jmh_tmp"
fi
