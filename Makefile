# The course's commands. `make lab` opens the course; `make test` runs every test and notebook.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: lab test test-fast notebooks translations check-translations fixtures verify node-tools outside-venvs traces bench binder-requirements hub clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-install when the package's dependencies change.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

LAB_ARGS ?=
# Jupyter refuses to start as root (a Docker container, a workshop VM) unless told it is meant;
# binder/lab_settings.py turns off the "Jupyter news?" pop-up, so the first screen is notebook 00.
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
# The edition follows COURSE_LANG, else the machine's locale: course_lib/lang.py decides (any spelling of
# Chinese opens the 简体中文 one, with JupyterLab's own menus in Chinese). `=`: asked only when lab runs.
LAB_EDITION = $(eval LAB_EDITION := $$(shell $(PYTHON) course_lib/lang.py))$(LAB_EDITION)
EDITION = $(if $(filter zh-CN,$(LAB_EDITION)),notebooks/zh-CN,notebooks)
lab: $(VENV)/.installed
	$(BIN)/jupyter lab $(EDITION)/00_map_and_first_run.ipynb $(LAB_ROOT) $$($(BIN)/python binder/lab_settings.py --edition $(LAB_EDITION)) $(LAB_ARGS)

test: $(VENV)/.installed outside-venvs  ## every zh-CN cell in step with its English (else it names notebook and cell), then every test and notebook
	$(BIN)/python tools/translations.py check
	$(BIN)/python -m pytest tests notebooks $(NBVAL)

test-fast: $(VENV)/.installed  ## unit tests only, no notebooks
	$(BIN)/python -m pytest tests

notebooks: $(VENV)/.installed  ## re-execute every notebook in place, storing fresh outputs; then build and execute the zh-CN edition
	cd notebooks && for nb in [0-9]*.ipynb; do \
		../$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.record_timing=False --CoalesceStreamsPreprocessor.enabled=True "$$nb" \
			&& ../$(BIN)/python ../.ci/stable_widget_ids.py "$$nb" || exit 1; done
	$(BIN)/python tools/translations.py build
	cd notebooks/zh-CN && for nb in $$(ls [0-9]*.ipynb 2>/dev/null); do \
		../../$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.record_timing=False --CoalesceStreamsPreprocessor.enabled=True "$$nb" \
			&& ../../$(BIN)/python ../../.ci/stable_widget_ids.py "$$nb" || exit 1; done

translations: $(VENV)/.installed  ## update every zh-CN catalog (tools/locale) from its English notebook
	$(BIN)/python tools/translations.py extract

check-translations: $(VENV)/.installed  ## fail, naming notebook and cell, where the zh-CN edition is not in step
	$(BIN)/python tools/translations.py check

fixtures: $(VENV)/.installed  ## re-record fixtures/*.json from a real offline run
	$(BIN)/python -m course_lib.fixtures

verify: $(VENV)/.installed
	$(BIN)/python -m course_lib.verify fields
	$(BIN)/python -m course_lib.verify roundtrip

bench: $(VENV)/.installed  ## benchmarks against real peers; prints figures (needs Node for the reference server)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	cd tests/node && npm install --no-audit --no-fund
	$(BIN)/python -m benchmarks

# LangGraph (its MCP adapter requires mcp<2), the Claude Agent SDK (from its source, without the CLI its wheel
# bundles) and Phoenix, each in build/<name>-venv from tests/outside/<name>-requirements.txt; rebuilt when a
# requirements file changes (course_lib/frameworks/venvs.py keeps its hash in the venv).
outside-venvs: $(VENV)/.installed  ## the venvs of notebook 09c's outside frameworks and trace viewer (LangGraph, Claude Agent SDK, Phoenix)
	$(BIN)/python -m course_lib.frameworks.venvs langgraph claude phoenix

traces: $(VENV)/.installed  ## Arize Phoenix on http://127.0.0.1:6006, this machine only; it keeps what you send it in build/phoenix/
	$(BIN)/python -m course_lib.tracing.viewer --port 6006

node-tools:  ## the pinned MCP Inspector, reference filesystem server, conformance suite, Mastra, the Claude Code CLI and Node 22, into tests/node (needs Node.js)
	cd tests/node && npm install --no-audit --no-fund

HUB_ARGS ?=
hub: $(VENV)/.installed  ## a workshop JupyterHub on http://127.0.0.1:8000 (workshop/): prints the passwords file's place and each learner who logs in
	$(BIN)/python binder/lab_settings.py
	test -x tests/node/node_modules/.bin/configurable-http-proxy || (cd tests/node && npm install --no-audit --no-fund)
	$(BIN)/python -m workshop.hub $(HUB_ARGS)

binder-requirements:  ## re-pin binder/requirements.txt from pyproject.toml in a fresh Python 3.12 venv
	rm -rf build/binder-venv && $${PYTHON312:-python3.12} -m venv build/binder-venv
	build/binder-venv/bin/python -m pip install --quiet . nbgitpuller  # nbgitpuller: the workshop image (workshop/kubernetes) pulls the course with it
	{ sed -n '1,2p' binder/requirements.txt; build/binder-venv/bin/python -m pip freeze --exclude tool-calling-course; } > build/requirements.txt
	mv build/requirements.txt binder/requirements.txt && rm -rf build/binder-venv

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
