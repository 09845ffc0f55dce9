# Two commands for a fresh machine: `make demo` and `make test` (the README's, and CI's in .ci/run).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: install demo demo-signed test test-slow lint docs docs-refs

# pip speaks (no -q): the first install takes a minute or two, and a silent minute looks hung.
$(VENV)/.installed: pyproject.toml
	@echo "== install 1/3: a virtualenv in $(VENV)"
	$(PYTHON) -m venv $(VENV)
	@echo "== install 2/3: an up-to-date pip"
	$(PY) -m pip install --disable-pip-version-check --upgrade pip
	@echo "== install 3/3: slopd, editable, with its test and docs tools ('.[dev]')"
	$(PY) -m pip install --disable-pip-version-check -e '.[dev]'
	@touch $@
	@echo "== installed: $(VENV)/bin/slopd"

install: $(VENV)/.installed

# Runs the daemon (embedded defaults, no config) on a fresh copy of sample-hub/, then shows what it did.
demo: install
	@demo=$$(mktemp -d /tmp/slopd-demo.XXXXXX); cp -r sample-hub "$$demo/hub"; \
	echo "== slopd run --once on a copy of sample-hub/ in $$demo/hub"; \
	XDG_CONFIG_HOME="$$demo/config" $(VENV)/bin/slopd run --hub "$$demo/hub" --state "$$demo/state" --once 2>/dev/null; \
	echo "== outbox/"; ls "$$demo/hub/outbox"; \
	echo "== the reply to the handoff"; cat "$$demo/hub/outbox/20260704t072000z-handoff-parser.result.md"; \
	echo "== slopd status"; $(VENV)/bin/slopd status --hub "$$demo/hub" --state "$$demo/state"; \
	echo "== slopd tail --id 20260704t073000z-instigate-tests"; \
	$(VENV)/bin/slopd tail --hub "$$demo/hub" --state "$$demo/state" --id 20260704t073000z-instigate-tests

# The same with sample-config/: the executor and the signed `hello` order run; forged and tampered orders are refused.
demo-signed: install
	@demo=$$(mktemp -d /tmp/slopd-demo.XXXXXX); cp -r sample-hub "$$demo/hub"; \
	echo "== slopd run --once --config sample-config/config.toml on a copy of sample-hub/ in $$demo/hub"; \
	$(VENV)/bin/slopd run --hub "$$demo/hub" --state "$$demo/state" --config sample-config/config.toml --once 2>/dev/null; \
	echo "== outbox/"; ls "$$demo/hub/outbox"; \
	for reply in 20260704t080000z-order-hello.result 20260704t080500z-order-forged.error 20260704t081000z-order-tampered.error 20260704t073000z-instigate-tests.result; do \
		echo "== $$reply"; sed -n '/^---$$/,/^---$$/!p' "$$demo/hub/outbox/$$reply.md"; done

lint: install
	$(PY) -m ruff check slopd tests bench fuzz docgen
	$(PY) -m ruff format --check slopd tests bench fuzz docgen
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache

# The documentation site (mkdocs.yml, docs/) into site/: --strict makes every warning (a broken link or
# anchor, a page missing from the nav) an error. Offline: nothing in mkdocs.yml fetches.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

test: lint docs
	$(PY) -m pytest -q

test-slow: install
	$(PY) -m pytest -q -m slow || [ $$? -eq 5 ]  # 5: no slow test selected

# Rewrites the references in docs/ from the code (the CLI, config, MCP, HTTP and log references and
# the admission table); tests/e2e/docs/test_docs_references.py fails while one is stale.
docs-refs: install
	$(PY) -m docgen
