# Two commands matter: `make run` (demo shop on a bare machine) and `make test` (the suite).
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# Absolute URLs (BCP profile, continue_url, e-mails) must name the port actually served.
export BCP_PUBLIC_URL ?= http://$(HOST):$(PORT)

.PHONY: run test test-random bench ucp-conformance worker beat lint fmt migrate demo clean

UV_VERSION := 0.13.8
# The django-stubs plugin loads the settings; under CI=true they refuse the SQLite fallback (no database is opened).
MYPY := DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres} $(VENV)/bin/mypy

# The versions CI tested: uv.lock (`uv lock` after changing pyproject.toml's dependencies). `--locked` refuses a
# lock that no longer matches pyproject.toml; `--inexact` leaves pip and uv themselves in the venv.
$(STAMP): pyproject.toml uv.lock
	@test -x $(PY) || "$$(sh scripts/find_python.sh)" -m venv $(VENV)
	$(PY) -m pip install --quiet uv==$(UV_VERSION)
	$(VENV)/bin/uv sync --quiet --locked --inexact --extra dev --python $(PY)
	@touch $(STAMP)

# The production pins (the Dockerfile's and the production smoke test's install): uv.lock's versions, the dev extra
# left out, hash-checked. Re-made after `uv lock`; tests/deploy/test_dockerfile.py fails while it lags behind.
requirements.txt: uv.lock
	$(VENV)/bin/uv export --quiet --frozen --no-emit-project --no-dev --format requirements.txt -o requirements.txt

migrate: $(STAMP)
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py seed_demo
	$(PY) manage.py ensure_demo_admin

run: demo
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Shop: $(BCP_PUBLIC_URL)/   admin: $(BCP_PUBLIC_URL)/admin/   BCP profile: $(BCP_PUBLIC_URL)/.well-known/bcp"
	BCP_OUTBOUND_ALLOWLIST=$${BCP_OUTBOUND_ALLOWLIST-127.0.0.1,localhost} \
		SHOP_INPROCESS_SCHEDULER=$${SHOP_INPROCESS_SCHEDULER-true} \
		$(VENV)/bin/uvicorn config.asgi:application --host $(HOST) --port $(PORT)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(MYPY)
	@sh scripts/ensure_chromium.sh
	$(PY) scripts/run_tests.py $(PYTEST_ARGS)

# The suite in a random order (pytest-random-order; not part of CI): proves no test depends on another.
# The seed is printed in the header; repeat an order with PYTEST_ARGS=--random-order-seed=N.
test-random: $(STAMP)
	@sh scripts/ensure_chromium.sh
	$(PY) scripts/run_tests.py --random-order $(PYTEST_ARGS)

bench: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres} \
		CELERY_BROKER_URL=$${CELERY_BROKER_URL:-redis://127.0.0.1:6379/0} \
		BENCH_REDIS_URL=$${BENCH_REDIS_URL-redis://127.0.0.1:6379/11} \
		$(VENV)/bin/pytest tests/bench -p no:cacheprovider -s -o testpaths=tests/bench -o norecursedirs=

# The official UCP conformance suite (vendored, pinned: tests/ucp_conformance/vendor/VERSION.md), unmodified, against
# a live uvicorn serving the UCP face with the flower_shop data loaded; passes per file in var/ucp_conformance/.
# UCP_AGENT_PROFILE=tests/ucp_conformance/complete-agent-profile.json runs it with a profile that names checkout.
ucp-conformance: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres} \
		$(PY) scripts/ucp_conformance.py $${UCP_AGENT_PROFILE:+--agent-profile $$UCP_AGENT_PROFILE}

# With a broker the worker prepares and sends order webhooks: it allows loopback platforms like `run`.
worker: $(STAMP)
	BCP_OUTBOUND_ALLOWLIST=$${BCP_OUTBOUND_ALLOWLIST-127.0.0.1,localhost} \
		$(VENV)/bin/celery -A config worker --loglevel=INFO

beat: $(STAMP)
	$(VENV)/bin/celery -A config beat --loglevel=INFO

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(MYPY)
	$(VENV)/bin/ruff format --check .

fmt: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) var staticfiles
