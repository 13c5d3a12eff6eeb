"""Every exercise's reference solution passes its own check; an unanswered starter does not."""

import importlib
import pkgutil

import pytest

import course_lib.exercises as exercises

MODULES = [importlib.import_module(f"course_lib.exercises.{m.name}")
           for m in pkgutil.iter_modules(exercises.__path__) if m.name.startswith("nb")]  # fmt: skip
CASES = [(module, name) for module in MODULES for name in module.SOLUTIONS]


def test_every_notebook_module_has_at_least_two_checked_exercises():
    for module in MODULES:
        assert len(module.SOLUTIONS) >= 2, module.__name__


@pytest.mark.parametrize(("module", "name"), CASES, ids=[f"{m.__name__.rsplit('.', 1)[1]}.{n}" for m, n in CASES])
def test_solution_passes_its_check(module, name, capsys):
    assert getattr(module, name)(module.SOLUTIONS[name]()) is True
    assert capsys.readouterr().out.startswith("✓")


@pytest.mark.parametrize(("module", "name"), CASES, ids=[f"{m.__name__.rsplit('.', 1)[1]}.{n}" for m, n in CASES])
def test_starter_is_reported_as_not_answered(module, name, capsys):
    assert getattr(module, name)(...) is False
    assert capsys.readouterr().out.startswith("✗")
