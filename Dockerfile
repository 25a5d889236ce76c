# syntax=docker/dockerfile:1
# Production image. Stage 1 builds wheels (the shop's own, carrying templates/static/locale as package
# data, and every dependency at the version uv.lock pins: requirements.txt, hash-checked); stage 2 installs
# only those wheels into a slim runtime, with no source tree, compiler or pip cache, and runs as a non-root user.

FROM python:3.13-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml setup.py README.md requirements.txt ./
COPY config config
COPY kernel kernel
COPY shop shop
COPY orders orders
COPY payments payments
COPY bcp_app bcp_app
COPY fiscal fiscal
COPY carriers carriers
COPY templates templates
COPY static static
COPY locale locale
# The dependencies CI tested (requirements.txt = `make requirements.txt`, exported from uv.lock), then the shop
# alone: the runtime's install finds only these wheels, so it cannot pick a newer release than CI ran.
RUN pip wheel --require-hashes --wheel-dir /wheels -r requirements.txt && pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.13-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings \
    SHOP_VAR_DIR=/app/var \
    DJANGO_STATIC_ROOT=/app/staticfiles
# DejaVu Sans draws the demo catalogue's photo captions with their accents ("Básica"; shop/catalog/images.py).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home --uid 10001 loja
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links /wheels loja-bcp
WORKDIR /app
# Production settings (DEBUG off selects WhiteNoise's compressed manifest storage), so the hashed
# manifest exists at run time. The secret key is a throwaway that lives only in this one command.
RUN DJANGO_DEBUG=false DJANGO_SECRET_KEY=collectstatic-at-build-time-only-not-a-secret django-admin collectstatic --noinput --verbosity 0
RUN mkdir -p /app/var/media && chown -R loja:loja /app/var
USER loja
EXPOSE 8000
# /healthz is answered before host and HTTPS checks, so a probe on 127.0.0.1 over plain http works.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# WEB_CONCURRENCY: uvicorn worker processes; FORWARDED_ALLOW_IPS: the proxy addresses or networks trusted for
# X-Forwarded-* (uvicorn reads both from the environment; unset, only 127.0.0.1 and ::1; never `*`, README "Security").
CMD ["uvicorn", "config.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--proxy-headers", "--no-access-log"]
