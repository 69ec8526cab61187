# The README's two commands. Each does all setup on a fresh Debian machine.
.PHONY: demo test setup

setup:
	@bash scripts/setup.sh

demo: setup
	.venv/bin/benchlab demo

test: setup
	.venv/bin/python -m pytest -q -n 2 --dist loadgroup
