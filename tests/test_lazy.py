"""benchlab.lazy: a package's names load from their modules on first use, once."""

import subprocess
import sys
import textwrap

import pytest


def test_a_lazy_name_loads_its_module_on_first_use_and_is_kept(tmp_path):
    """In a fresh interpreter: the submodule is not imported until the name is read; then the
    value is the submodule's own, stored in the package (no second trip through __getattr__);
    an unknown name is an AttributeError naming the package."""
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from benchlab.lazy import lazy_names\n"
        "__getattr__ = lazy_names(__name__, {'answer': 'deep'}, globals())\n")
    (pkg / "deep.py").write_text("answer = object()\n")
    script = textwrap.dedent("""
        import sys
        import lazypkg
        assert 'lazypkg.deep' not in sys.modules
        value = lazypkg.answer
        assert 'lazypkg.deep' in sys.modules
        assert value is sys.modules['lazypkg.deep'].answer
        assert vars(lazypkg)['answer'] is value
        try:
            lazypkg.missing
        except AttributeError as e:
            assert "'lazypkg' has no attribute 'missing'" in str(e), e
        else:
            raise SystemExit('no AttributeError')
        print('ok')
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.mark.parametrize("package, name, home", [
    ("benchlab.control.cgroups", "sweep_stale", "benchlab.control.cgroups.sweep"),
    ("benchlab.control.cgroups", "CgroupLimits", "benchlab.control.cgroups.limits"),
    ("benchlab.control.system", "tune", "benchlab.control.system.tuning"),
    ("benchlab.control.system", "check_cpu_contention", "benchlab.control.system.contention"),
])
def test_the_control_packages_lazy_names_are_their_modules_own(package, name, home):
    import importlib

    assert getattr(importlib.import_module(package), name) is getattr(
        importlib.import_module(home), name)
