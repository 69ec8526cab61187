"""Real harnesses for the tests: a Go package, a Google Benchmark binary, a criterion crate and
a pytest-benchmark test file, made in a test's temporary directory.

Each maker skips its test (with the reason) when the toolchain is absent here, and fails it in
CI, where scripts/setup.sh installs it (``tests.conftest.require_tool``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchlab.paths import user_cache_dir
from tests.conftest import in_ci, require_tool

HERE = Path(__file__).resolve().parent
CRATE = HERE / "criterion_crate"

GO_TEST = '''package tiny

import "testing"

func BenchmarkSum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Sum(SIZE)
	}
}

func BenchmarkCopy(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(1024)
	src := make([]byte, 1024)
	for i := 0; i < b.N; i++ {
		dst := make([]byte, len(src))
		copy(dst, src)
	}
	b.ReportMetric(3.5, "frobs/op")
}

func BenchmarkSub(b *testing.B) {
	b.Run("n=10", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Sum(10)
		}
	})
}
'''
GO_LIB = '''package tiny

var sink int

func Sum(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	sink = s
	return s
}
'''


#: Where the official Go and rustup installers put their tools, outside PATH for a shell that
#: does not read the user's profile (a CI runner's non-interactive bash).
TOOL_DIRS = (Path("/usr/local/go/bin"), Path.home() / ".cargo" / "bin")


def tools_on_path() -> None:
    """Put the toolchain directories that exist here on this process's PATH (its children,
    the harness commands, inherit it)."""
    path = os.environ.get("PATH", "").split(os.pathsep)
    for d in TOOL_DIRS:
        if d.is_dir() and str(d) not in path:
            path.append(str(d))
    os.environ["PATH"] = os.pathsep.join(path)


def go_package(root: Path, size: int = 1000) -> Path:
    """A Go module with benchmarks Sum, Copy (B/op, allocs/op, MB/s, frobs/op) and Sub/n=10."""
    tools_on_path()
    require_tool("go", why="(Go's testing.B is the go harness)")
    root.mkdir(parents=True, exist_ok=True)
    (root / "go.mod").write_text("module example.com/tiny\n\ngo 1.19\n")
    (root / "tiny.go").write_text(GO_LIB)
    (root / "tiny_test.go").write_text(GO_TEST.replace("SIZE", str(size)))
    return root


GO_SUM_PRODUCT = """package tiny

import "testing"

var sink int

func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func BenchmarkSum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = work(SUM)
	}
}

func BenchmarkProduct(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = work(2000) * 3
	}
}
"""


def go_sum_product(sum_loops: int = 2000) -> dict[str, str]:
    """The files (name: text) of a Go module of two benchmarks, Sum, whose loop runs
    ``sum_loops`` times, and Product, 2000 times: a head commit that raises ``sum_loops`` slows
    Sum alone. Go is put on PATH, and required."""
    tools_on_path()
    require_tool("go", why="(the go harness runs go test -bench)")
    return {"go.mod": "module example.com/tiny\n\ngo 1.19\n",
            "tiny_test.go": GO_SUM_PRODUCT.replace("SUM", str(sum_loops))}


GBENCH_SOURCE = r'''#include <benchmark/benchmark.h>
#include <vector>
static void BM_Sum(benchmark::State& state) {
  long n = state.range(0);
  for (auto _ : state) {
    long s = 0;
    for (long i = 0; i < n; ++i) benchmark::DoNotOptimize(s += i);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["frobs"] = 3.5;
}
BENCHMARK(BM_Sum)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
static void BM_Vec(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<int> v(64);
    benchmark::DoNotOptimize(v.data());
  }
  state.SetBytesProcessed(state.iterations() * 256);
}
BENCHMARK(BM_Vec);
BENCHMARK_MAIN();
'''


def gbench_binary(root: Path) -> Path:
    """A Google Benchmark binary (BM_Sum/100, BM_Sum/1000 in us, BM_Vec) built with g++."""
    gxx = require_tool("g++", why="(Google Benchmark binaries are C++)")
    if not Path("/usr/include/benchmark/benchmark.h").is_file():
        if in_ci():
            pytest.fail("libbenchmark-dev is not installed; scripts/setup.sh installs it")
        pytest.skip("libbenchmark-dev is not installed (apt-get install libbenchmark-dev)")
    root.mkdir(parents=True, exist_ok=True)
    (root / "b.cc").write_text(GBENCH_SOURCE)
    subprocess.run([gxx, "-O2", "b.cc", "-o", "b", "-lbenchmark", "-lpthread"], cwd=root,
                   check=True, capture_output=True)
    return root / "b"


def criterion_crate() -> Path:
    """The criterion crate of tests/harnesses/criterion_crate, built once (``cargo bench
    --no-run``) in the user's cache under a key of its Cargo.lock and sources: the first build
    compiles criterion and its dependencies from crates.io (minutes on 2 vCPUs)."""
    tools_on_path()
    cargo = require_tool("cargo", why="(criterion.rs runs under cargo bench)")
    files = sorted(p for p in CRATE.rglob("*") if p.is_file())
    key = hashlib.sha256(b"".join(p.relative_to(CRATE).as_posix().encode() + p.read_bytes()
                                  for p in files)).hexdigest()[:16]
    home = user_cache_dir() / "test-criterion" / key
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.parent / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two workers at once build once
        if not (home / ".built").exists():
            shutil.copytree(CRATE, home, dirs_exist_ok=True)  # a killed build's target is reused
            proc = subprocess.run([cargo, "bench", "--no-run", "--locked"], cwd=home,
                                  capture_output=True, text=True, timeout=1500)
            if proc.returncode != 0:
                tail = proc.stderr.strip().splitlines()[-3:]
                if in_ci():
                    pytest.fail(f"cargo could not build the criterion crate: {tail}")
                pytest.skip(f"cargo could not build the criterion crate (crates.io?): {tail}")
            (home / ".built").write_text("")
    return home


#: The criterion command a test runs: short, so a run takes a few seconds.
CRITERION_COMMAND = ("cargo bench --locked --bench fib -- --warm-up-time 0.05 "
                     "--measurement-time 0.2 --sample-size 10")

PYTEST_BENCH = '''import pytest


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def test_fib10(benchmark):
    benchmark(fib, 10)


@pytest.mark.parametrize("n", [5, 8])
def test_fibp(benchmark, n):
    benchmark(fib, n)
'''


def pytest_benchmark_project(root: Path) -> str:
    """A directory with a pytest-benchmark test file; returns the pytest command to run there
    (this interpreter, its own ini file so this repository's pytest options stay out; without
    the xdist worker's variable, which turns pytest-benchmark off when the suite runs with -n)."""
    try:
        import pytest_benchmark  # noqa: F401
    except ImportError:
        if in_ci():
            pytest.fail("pytest-benchmark is not installed; it is in the dev group (uv sync)")
        pytest.skip("pytest-benchmark is not installed (uv sync installs the dev group)")
    root.mkdir(parents=True, exist_ok=True)
    (root / "test_fib.py").write_text(PYTEST_BENCH)
    (root / "pytest.ini").write_text("[pytest]\n")
    return (f"env -u PYTEST_XDIST_WORKER {sys.executable} -m pytest -q -p no:cacheprovider test_fib.py "
            f"--benchmark-max-time=0.01 --benchmark-min-rounds=5")



JMH_PROJECT = HERE / "jmh_project"
#: The JMH project's build cache, fixed when this module is imported: a test's ``cache_env``
#: points the benchlab cache elsewhere afterwards, and would rebuild it in every test.
JMH_CACHE = user_cache_dir() / "test-jmh"
#: A lean JMH command: one JVM fork, no warmup, three 100 ms iterations per benchmark.
JMH_COMMAND = "java -jar target/benchmarks.jar -f 1 -wi 0 -i 3 -r 100ms"


def jmh_sources(heavy_loops: int = 3000) -> dict[str, str]:
    """The files (path in the project: text) of tests/harnesses/jmh_project, a Maven project of
    two JMH benchmarks of one loop, ``bench.Work.light`` (1000 times) and ``bench.Work.heavy``
    (``heavy_loops`` times), both with the parameter ``loops=1000``."""
    files = {p.relative_to(JMH_PROJECT).as_posix(): p.read_text()
             for p in sorted(JMH_PROJECT.rglob("*")) if p.is_file()}
    java = "src/main/java/bench/Work.java"
    files[java] = files[java].replace("HEAVY_LOOPS = 3000", f"HEAVY_LOOPS = {heavy_loops}")
    return files


def jmh_project() -> Path:
    """The JMH project (heavy: 3x light's work) built once (``mvn package``: the jar
    ``target/benchmarks.jar``) under the user's cache, keyed by its sources. The first build
    fetches JMH 1.37 and Maven's plugins from Maven Central into ``~/.m2`` (scripts/setup.sh
    does it once); then an offline build (``mvn -o``) works too."""
    require_tool("java", why="(JMH benchmarks run on a JVM: default-jdk-headless)")
    mvn = require_tool("mvn", why="(the JMH project builds with Maven)")
    files = jmh_sources()
    key = hashlib.sha256("".join(f"{k}\0{v}\0" for k, v in files.items()).encode()
                         ).hexdigest()[:16]
    home = JMH_CACHE / key
    JMH_CACHE.mkdir(parents=True, exist_ok=True)
    with open(JMH_CACHE / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two workers at once build once
        if not (home / ".built").exists():
            for name, text in files.items():
                (home / name).parent.mkdir(parents=True, exist_ok=True)
                (home / name).write_text(text)
            proc = subprocess.run([mvn, "-q", "-B", "package"], cwd=home, capture_output=True,
                                  text=True, timeout=900)
            if proc.returncode != 0:
                tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
                if in_ci():
                    pytest.fail(f"mvn could not build the JMH project: {tail}")
                pytest.skip(f"mvn could not build the JMH project (Maven Central unreachable?): "
                            f"{tail}")
            (home / ".built").write_text("")
    return home
