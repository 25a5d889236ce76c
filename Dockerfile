FROM python:3.13-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY shop shop
COPY orders orders
COPY payments payments
COPY bcp_app bcp_app
RUN pip install .
COPY . .
RUN DJANGO_DEBUG=true python manage.py collectstatic --noinput --verbosity 0
RUN useradd --create-home loja && mkdir -p /app/var && chown loja /app/var
USER loja
EXPOSE 8000
CMD ["uvicorn", "shop.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--proxy-headers"]
