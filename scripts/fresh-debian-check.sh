#!/usr/bin/env bash
# Does the README's developer install work on a truly fresh Debian 12? Builds a minimal
# Debian 12 (bookworm) root with debootstrap, copies the committed tree (git archive HEAD, what a
# clone gives) into it and runs the README's two commands, `make demo` and `make test`, inside
# a chroot. The root has only debootstrap's minbase plus make (the README's one prerequisite)
# and ca-certificates: no python3-pip, no uv, no gcc; scripts/setup.sh must install the rest.
#
# Usage (root):  scripts/fresh-debian-check.sh [--reuse-base] [WORKDIR]
#   WORKDIR        default /var/tmp/benchlab-fresh-debian (the root is rebuilt there each time)
#   --reuse-base   start from the debootstrap tarball of an earlier run (skips ~2 minutes)
#   FRESH_TEST_ARGS='tests/x tests/y'  passed to both pytest phases of `make test` (through
#                  PYTEST_ADDOPTS), to check a subset on a shared machine; default: every test.
#                  With a subset, a phase that selects none of its tests (pytest's exit 5, "no
#                  tests collected": e.g. a subset without a serial test, or with only serial
#                  ones) counts as passed and says so: a subset checks what it names, and a phase
#                  it does not reach has nothing to check. Without a subset exit 5 stays a
#                  failure: the whole suite selecting nothing means tests were lost.
# Prints one line at the end: "fresh-debian-check: PASS ..." or "... FAIL ..." (exit 0 / 1).
# It takes 10-20 minutes and downloads ~1 GB of Debian and PyPI packages; not run in CI.
set -euo pipefail

reuse=0
if [[ ${1:-} == --reuse-base ]]; then reuse=1; shift; fi
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/var/tmp/benchlab-fresh-debian}
root=$work/root
log=$work/check.log
[[ $(id -u) -eq 0 ]] || { echo "fresh-debian-check: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
mkdir -p "$work"
: >"$log"
say() { echo "fresh-debian-check: $*" | tee -a "$log"; }

# The Debian mirror this machine's apt uses (deb822 "URIs:" or one-line "deb URL suite ...").
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
           2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}
                              /^deb / && $0 !~ /security/ {for (i = 2; i <= NF; i++)
                                if ($i ~ /^https?:/) {print $i; exit}}' || true)
mirror=${mirror:-http://deb.debian.org/debian}

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >>"$log" 2>&1
fi

cleanup() {
  for m in dev/shm dev/pts dev sys proc; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -R -l "$root/$m" || true
  done
}
trap cleanup EXIT
cleanup
rm -rf "$root"
start=$(date +%s)
if [[ $reuse -eq 1 && -f $work/base.tar ]]; then
  say "unpacking the debootstrap root of an earlier run"
  mkdir -p "$root" && tar -xf "$work/base.tar" -C "$root"
else
  say "debootstrap --variant=minbase bookworm from $mirror (log: $log)"
  debootstrap --variant=minbase --include=make,ca-certificates bookworm "$root" "$mirror" \
    >>"$log" 2>&1
  tar -cf "$work/base.tar" -C "$root" .
fi

# The machine's network, as any new machine here gets it: DNS, and the CA of an intercepting
# proxy if this network has one (PyPI over TLS fails without it).
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >>"$log" 2>&1
fi
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"            # with /sys/fs/cgroup: benchlab runs in cgroups
mount --rbind /dev "$root/dev"
mountpoint -q "$root/dev/shm" || mount -t tmpfs shm "$root/dev/shm"

mkdir -p "$root/root/benchlab"
git -C "$repo" archive HEAD | tar -x -C "$root/root/benchlab"
say "tree: $(git -C "$repo" rev-parse --short HEAD); running: make demo && make test ${FRESH_TEST_ARGS:+(tests: $FRESH_TEST_ARGS)}"

# A subset's pytest plugin (outside the checked tree): exit 5 of a phase counts as passed.
addopts=${FRESH_TEST_ARGS:-}
if [[ -n $addopts ]]; then
  mkdir -p "$root/root/fresh-check"
  cat >"$root/root/fresh-check/fresh_subset.py" <<'PLUGIN'
"""fresh-debian-check's subset mode: a phase that selects none of the subset's tests passes."""
import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("fresh-debian-check: no test of the subset in this phase "
                                "(pytest exit 5): counted as passed")
PLUGIN
  addopts="-p fresh_subset $addopts"
fi

bundle=/etc/ssl/certs/ca-certificates.crt
set +e
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  SSL_CERT_FILE=$bundle PIP_CERT=$bundle PYTEST_ADDOPTS="$addopts" \
  ${FRESH_TEST_ARGS:+PYTHONPATH=/root/fresh-check} \
  /bin/bash -c 'cd /root/benchlab && python3 -m pip --version >/dev/null 2>&1 && echo "python3 -m pip exists (not a fresh Debian)";
                command -v python3 gcc uv || true; make demo && make test' >>"$log" 2>&1
rc=$?
set -e
elapsed=$(( $(date +%s) - start ))
if [[ $rc -eq 0 ]]; then
  say "PASS: make demo and make test in a fresh Debian 12 root, $((elapsed / 60)) min $((elapsed % 60)) s"
  exit 0
fi
tail -n 30 "$log" >&2
say "FAIL (exit $rc) after $((elapsed / 60)) min $((elapsed % 60)) s; log: $log"
exit 1
