# The README's two commands. Each does all setup on a fresh Debian machine.
.PHONY: demo test setup

setup:
	@bash scripts/setup.sh

demo: setup
	.venv/bin/benchlab demo

# Lint (pyflakes rules, import order), then two phases: everything in parallel, then the timing-sensitive tests alone on a quiet machine.
test: setup
	.venv/bin/ruff check src tests bench scripts
	.venv/bin/python -m pytest -q -n 2 --dist loadgroup -m "not serial"
	.venv/bin/python -m pytest -q -m serial
