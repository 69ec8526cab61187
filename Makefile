# The README's two commands. Each does all setup on a fresh Debian machine.
.PHONY: demo test setup

setup:
	@bash scripts/setup.sh

demo: setup
	.venv/bin/benchlab demo

# The files that hold timing-sensitive (serial) tests: the serial phase collects only these, not
# the whole suite a second time. tests/test_serial_phase.py keeps the list exact.
SERIAL_TESTS = tests/bundle/test_reproduce.py tests/cli/test_hyperfine_compat.py \
	tests/cli/test_run_control.py tests/cli/test_verdict_drift_run.py \
	tests/cli/test_verdict_everywhere.py \
	tests/cluster/test_faults.py tests/control/test_load.py tests/control/test_system.py \
	tests/machines/test_profile.py tests/test_startup.py tests/workloads/test_workloads.py \
	tests/ci/test_contention.py

# Lint (pyflakes rules, import order), then two phases: everything in parallel, then the timing-sensitive tests alone on a quiet machine.
# The parallel phase hands tests out in the order tests/scheduling.py gives (longest first, the users
# of a shared fixture together); --no-loadscope-reorder keeps xdist from sorting groups by size.
test: setup
	.venv/bin/ruff check src tests bench scripts
	.venv/bin/python -m pytest -q -n 2 --dist loadgroup --no-loadscope-reorder -m "not serial"
	.venv/bin/python -m pytest -q -m serial $(SERIAL_TESTS)
